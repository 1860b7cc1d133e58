"""The learned judge of supersession (issue 39): does a new statement make an older one no
longer true?

For a (new, old) pair it gives the probability that the old statement is updated by the new
one, from a small network (an average of a few networks of one hidden layer; a logistic
regression is the special case :meth:`Judge.linear`) over the pair's features: the two stored multilingual
vectors (their product, their distance, each alone: what a sentence that changes something
reads like, in any language) and a few signals of structure (:data:`STRUCTURE`, one row per
signal). Its weights ship in the wheel (``judge_<encoder>.npz``), fitted by
``training/judge/train.py`` on cases written by other hands (``training/truth``) and on the
labelled pairs of one person's store (``training/judge/store_pairs.jsonl``), with the
thresholds it was calibrated to: ``write`` (supersede: few look-alikes retired) and ``read``
(mark the older of two hits served together). Whatever it says, two statements about records
with different identifiers never replace each other (:func:`.language.records.other_record`;
in a stated change, an identifier late in the text is read as the value that changed).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import JudgeError
from ..language.quantities import Quantity, compare, quantities
from ..language.records import other_record
from ..language.segment import has_cjk, is_hedged, sentences
from ..text import index_terms
from . import claims, rules

if TYPE_CHECKING:  # numpy loads with the first judgement, not with `varvemem stats`
    import numpy as np

FORMAT = 2  # the layout of a judge file; a file of another format is refused


@dataclass
class Side:
    """One statement of a pair, parsed once however many pairs it is in."""

    text: str

    @cached_property
    def values(self) -> tuple[claims.Value, ...]:
        return claims.values(self.text)

    @cached_property
    def kinds(self) -> frozenset[str]:
        return frozenset(claims.kind_class(v.kind) for v in self.values)

    @cached_property
    def value_texts(self) -> frozenset[str]:
        return frozenset(v.text for v in self.values)

    @cached_property
    def terms(self) -> frozenset[str]:
        return _terms(self.text)

    @cached_property
    def quantities(self) -> frozenset[Quantity]:
        """Times, days, durations, amounts and counts in canonical values, either language."""
        return quantities(self.text)

    @cached_property
    def lowered(self) -> str:
        return claims.normalise(self.text).lower()

    @cached_property
    def cjk(self) -> bool:
        return has_cjk(self.text)

    @cached_property
    def hedged(self) -> bool:
        """A plan, a guess or a wish in one of its sentences ("we might move to ...")."""
        return any(is_hedged(s) for s in sentences(self.text))

    @cached_property
    def cue(self) -> bool:
        return rules.is_update(self.text)

    @cached_property
    def transition(self) -> bool:
        return claims.transition(self.text) is not None

    @cached_property
    def negation(self) -> bool:
        return claims.negation(self.text) is not None

    @cached_property
    def negated(self) -> bool:
        return claims.is_negated(self.text)

    @cached_property
    def ledger(self) -> bool:
        """A ledger line (:func:`.claims.is_record`): one that differs in a value is another."""
        return claims.is_record([v.kind for v in self.values])

    @cached_property
    def names_old_value(self) -> bool:
        """A transition that names the value it leaves ("from builder-a to ...") or a
        negation that names what is gone ("we retired Memcached from the billing API"): the
        rules find what holds it for its subject, or that nothing does."""
        t = claims.transition(self.text)
        n = claims.negation(self.text)
        return (t is not None and t.old is not None) or (n is not None and bool(n.values))

    @cached_property
    def states_change(self) -> bool:
        """It says something changed: a cue word, a transition or a negation."""
        return self.cue or self.transition or self.negation


@lru_cache(maxsize=16_384)  # an old statement is a candidate of many adds
def _terms(text: str) -> frozenset[str]:
    return frozenset(index_terms(text))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


# The signals of structure, one row each: (name, value of a (new, old) pair). A new row
# changes the features: the judge is retrained (training/judge/train.py) and its file's
# feature names no longer match the old file, which is then refused.
STRUCTURE: tuple[tuple[str, Callable[[Side, Side], float]], ...] = (
    ("new_has_values", lambda n, o: float(bool(n.values))),
    ("old_has_values", lambda n, o: float(bool(o.values))),
    ("a_kind_in_both", lambda n, o: float(bool(n.kinds & o.kinds))),
    ("a_kind_in_both_new_value", lambda n, o: float(bool(n.kinds & o.kinds)
                                                     and not n.value_texts & o.value_texts)),
    ("a_value_in_both", lambda n, o: float(bool(n.value_texts & o.value_texts))),
    ("same_values", lambda n, o: float(bool(n.values) and n.value_texts == o.value_texts)),
    ("old_value_named_in_new", lambda n, o: float(any(v in n.lowered for v in o.value_texts))),
    # The same in both languages and numeral systems ("6 pm" and "晚上六点" are one time):
    # a kind of quantity in both, a value in both, a kind in both with a new value.
    ("quantity_kind_in_both", lambda n, o: float(compare(n.quantities, o.quantities)[0])),
    ("quantity_in_both", lambda n, o: float(compare(n.quantities, o.quantities)[1])),
    ("quantity_kind_new_value", lambda n, o: float(compare(n.quantities, o.quantities)[2])),
    ("other_record", lambda n, o: float(other_record(n.text, o.text, n.states_change) is not None)),
    ("shared_terms", lambda n, o: _jaccard(n.terms, o.terms)),
    ("across_scripts", lambda n, o: float(n.cjk != o.cjk)),
    ("both_chinese", lambda n, o: float(n.cjk and o.cjk)),
    ("new_says_changed", lambda n, o: float(n.cue)),
    ("new_is_a_transition", lambda n, o: float(n.transition)),
    ("new_negates", lambda n, o: float(n.negation)),
    ("old_negated", lambda n, o: float(o.negated)),
    ("new_negated", lambda n, o: float(n.negated)),
    ("new_hedged", lambda n, o: float(n.hedged)),
    ("old_hedged", lambda n, o: float(o.hedged)),
    ("length_ratio", lambda n, o: max(-3.0, min(3.0, math.log1p(len(n.text))
                                                 - math.log1p(len(o.text))))),
)
# Each signal's range (default 0 to 1): what bounds the structure's share of a judgement.
BOUNDS: dict[str, tuple[float, float]] = {"length_ratio": (-3.0, 3.0)}


def feature_names(dim: int) -> list[str]:
    """The names of :func:`features`' columns for vectors of ``dim``."""
    return ["cosine", *(f"{part}_{i}" for part in ("product", "distance") for i in range(dim)),
            *(name for name, _ in STRUCTURE),
            *(f"{part}_{i}" for part in ("new", "old") for i in range(dim))]


def features(new: Side, old: Side, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The feature row of the pair: ``u`` and ``v`` are the statements' unit vectors."""
    import numpy as np

    structure = np.array([f(new, old) for _, f in STRUCTURE], dtype=np.float32)
    return np.concatenate([np.array([u @ v], dtype=np.float32), u * v, np.abs(u - v),
                           structure, u, v]).astype(np.float32)


@dataclass(frozen=True)
class Verdict:
    """What the judge says of one (new, old) pair: ``p`` (probability that the old is
    updated), ``veto`` (why it cannot be, whatever ``p``) and the judge's ``version``."""

    p: float
    veto: str | None
    version: str

    def reason(self) -> str:
        return f"judge {self.version}: p={self.p:.2f}" + (f", {self.veto}" if self.veto else "")


@dataclass(frozen=True)
class Judge:
    """A fitted judge over :func:`features` for vectors of ``encoder``: an ensemble of
    ``members`` networks with one hidden layer (ReLU), whose probabilities are averaged,
    p = mean_m sigmoid(w2_m . relu(x W1_m + b1_m) + b2_m). The hidden units of all members
    sit side by side: ``w1`` is (features, members x hidden), ``b1`` and ``w2`` are
    (members x hidden), ``b2`` (members)."""

    encoder: str
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    write: float  # supersede at or above
    read: float  # mark the older of two hits at or above
    meta: dict[str, Any] = field(default_factory=dict)
    digest: str | None = None  # of the file it was read from

    @classmethod
    def linear(cls, encoder: str, coef: np.ndarray, intercept: float, write: float,
               read: float, meta: dict[str, Any] | None = None) -> Judge:
        """A logistic regression as a network of two hidden units (relu(z) - relu(-z) = z)."""
        import numpy as np

        c = np.asarray(coef, dtype=np.float32)
        return cls(encoder, np.stack([c, -c], axis=1), np.array([intercept, -intercept],
                                                                 dtype=np.float32),
                   np.array([1.0, -1.0], dtype=np.float32), np.zeros(1, dtype=np.float32),
                   write, read, dict(meta or {}))

    @property
    def members(self) -> int:
        return int(self.b2.size)

    @cached_property
    def version(self) -> str:
        """The digest of its file (:func:`file_version`): recorded with each decision."""
        return self.digest or file_version(self.dump())

    def judge(self, new: Side, u: np.ndarray, olds: Sequence[tuple[Side, np.ndarray]],
              floor: float = 0.0) -> list[Verdict]:
        """One verdict per old statement (with its vector) against ``new`` (with ``u``).
        A pair whose vectors alone keep it under ``floor`` whatever its structure says (the
        structure's signals within their :data:`BOUNDS`) is not parsed: its ``p`` is then
        that bound (under ``floor``), not its value, and its ``veto`` is not looked for."""
        return self.judge_many([(new, u, olds)], floor)[0]

    def judge_many(self, items: Sequence[tuple[Side, np.ndarray,
                                               Sequence[tuple[Side, np.ndarray]]]],
                   floor: float = 0.0) -> list[list[Verdict]]:
        """:meth:`judge` for several new statements, each with its old ones, in one pass of
        the matrices (a search's hits: one product instead of one per new statement)."""
        import numpy as np

        owner = [i for i, (_, _, olds) in enumerate(items) for _ in olds]
        if not owner:
            return [[] for _ in items]
        pairs = [(items[i][0], old) for i, (_, _, olds) in enumerate(items) for old in olds]
        # The hidden layer's input from the vectors, part by part of :func:`features`' row
        # (the same sum as the row times w1, without building the rows).
        w = self._parts
        us = np.stack([u for _, u, _ in items]).astype(np.float32)
        vs = np.stack([v for _, (_, v) in pairs]).astype(np.float32)
        ur = us[owner]
        products = vs * ur
        pre = (np.outer(products.sum(axis=1), w["cosine"]) + products @ w["product"]
               + np.abs(vs - ur) @ w["distance"] + vs @ w["old"]
               + (us @ w["new"] + self.b1)[owner])
        top = self._probability(np.maximum(pre + w["structure_hi"], 0.0) * (self.w2 > 0)
                                + np.maximum(pre + w["structure_lo"], 0.0) * (self.w2 <= 0))
        wanted = top >= floor if floor > 0 else np.ones(len(pairs), dtype=bool)
        p = top.copy()
        rows = [i for i, keep in enumerate(wanted) if keep]
        if rows:
            structure = np.array([[f(pairs[i][0], pairs[i][1][0]) for _, f in STRUCTURE]
                                  for i in rows], dtype=np.float32)
            p[rows] = self._probability(np.maximum(pre[rows] + structure @ w["structure"], 0.0))
        if floor > 0:  # a bound is no value: it stays under the floor, whatever its rounding
            p = np.where(wanted, p, np.minimum(p, np.nextafter(min(floor, 1.0), 0.0)))
        out: list[list[Verdict]] = [[] for _ in items]
        # The veto parses the new statement for a change: asked only where it may matter.
        for i, (pi, keep, (new, (old, _))) in enumerate(zip(p, wanted, pairs)):
            out[owner[i]].append(Verdict(float(pi), other_record(
                new.text, old.text, new.states_change) if keep else None, self.version))
        return out

    def _probability(self, hidden: np.ndarray) -> np.ndarray:
        """The ensemble's probability for rows of hidden activations."""
        import numpy as np

        z = (hidden * self.w2).reshape(len(hidden), self.members, -1).sum(axis=2) + self.b2
        p: np.ndarray = (1.0 / (1.0 + np.exp(-z.astype(np.float64)))).mean(axis=1)
        return p

    @cached_property
    def _parts(self) -> dict[str, Any]:
        """The first layer cut into :func:`features`' parts, and the least and most the
        structure's signals can add to each hidden unit."""
        import numpy as np

        n = len(STRUCTURE)
        dim = (self.w1.shape[0] - n - 1) // 4
        w = self.w1
        structure = w[1 + 2 * dim:1 + 2 * dim + n]
        lo, hi = (np.array([BOUNDS.get(name, (0.0, 1.0))[i] for name, _ in STRUCTURE],
                           dtype=np.float32)[:, None] for i in (0, 1))
        return {"cosine": w[0], "product": w[1:1 + dim], "distance": w[1 + dim:1 + 2 * dim],
                "structure": structure,
                "structure_hi": np.maximum(structure * lo, structure * hi).sum(axis=0),
                "structure_lo": np.minimum(structure * lo, structure * hi).sum(axis=0),
                "new": w[1 + 2 * dim + n:1 + 3 * dim + n], "old": w[1 + 3 * dim + n:]}

    def dump(self) -> bytes:
        """The judge as a file (:func:`load` reads it back); the first layer in float16."""
        import numpy as np

        buf = io.BytesIO()
        header = {"format": FORMAT, "encoder": self.encoder, "members": self.members,
                  "write": self.write, "read": self.read,
                  "features": feature_names((self.w1.shape[0] - len(STRUCTURE) - 1) // 4),
                  "meta": self.meta}
        np.savez_compressed(buf, w1=self.w1.astype(np.float16), b1=self.b1.astype(np.float32),
                            w2=self.w2.astype(np.float32), b2=self.b2.astype(np.float32),
                            header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8))
        return buf.getvalue()


def file_version(body: bytes) -> str:
    """A judge's version: the first 12 hex digits of its file's SHA-256."""
    return hashlib.sha256(body).hexdigest()[:12]


def describe(mode: str, path: str | None, encoder: str) -> str:
    """What :func:`choose` would say, read without numpy (``varvemem stats``): the judge's
    version, or the rules and why."""
    if mode == "rules":
        return "rules (update.judge is rules)"
    where = Path(path) if path is not None else default_path(encoder)
    if not where.is_file():
        return f"rules (no judge ships for vectors of {encoder})" if path is None else \
            f"no judge file at {where}"
    return f"judge {file_version(where.read_bytes())}"


def default_path(encoder: str) -> Path:
    """Where the wheel keeps the judge for ``encoder`` (a model id such as ``usem3-0.2.1``)."""
    family = encoder.split("-", 1)[0]
    return Path(str(resources.files(__package__).joinpath(f"judge_{family}.npz")))


def load(path: Path, encoder: str) -> Judge:
    """The judge in ``path`` for vectors of ``encoder``; :class:`JudgeError` when it is
    missing, unreadable, of another format, for another encoder or of other features."""
    import numpy as np

    try:
        body = path.read_bytes()
        with np.load(io.BytesIO(body), allow_pickle=False) as data:
            header = json.loads(bytes(data["header"]).decode())
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                got = header.get("format") if isinstance(header, dict) else None
                raise JudgeError(f"the judge file {path} is of format {got!r}, this release "
                                 f"reads format {FORMAT}")
            w1, b1, w2, b2 = (np.asarray(data[k], dtype=np.float32)
                              for k in ("w1", "b1", "w2", "b2"))
    except FileNotFoundError:
        raise JudgeError(f"no judge file at {path}") from None
    except (OSError, KeyError, ValueError, UnicodeDecodeError) as exc:
        raise JudgeError(f"the judge file {path} cannot be read: {exc}") from None
    if header.get("encoder") != encoder:
        raise JudgeError(f"the judge file {path} was fitted on vectors of "
                         f"{header.get('encoder')!r}, the store's are {encoder!r}")
    dim = (w1.shape[0] - len(STRUCTURE) - 1) // 4 if w1.ndim == 2 else 0
    if dim < 1 or header.get("features") != feature_names(dim) \
            or w1.shape[0] != len(feature_names(dim)):
        raise JudgeError(f"the judge file {path} was fitted on other features than this "
                         "release computes: retrain it (training/judge/train.py)")
    if not (w1.shape[1] == b1.size == w2.size and b2.size >= 1 and w2.size % b2.size == 0):
        raise JudgeError(f"the judge file {path} has layers of mismatched shapes")
    try:
        return Judge(encoder=encoder, w1=w1, b1=b1, w2=w2, b2=b2,
                     write=float(header["write"]), read=float(header["read"]),
                     meta=dict(header.get("meta") or {}), digest=file_version(body))
    except (KeyError, TypeError, ValueError) as exc:
        raise JudgeError(f"the judge file {path} has a bad header: {exc}") from None


@dataclass(frozen=True)
class Choice:
    """The judge the engines use, or None with why (the rules alone decide then)."""

    judge: Judge | None
    why_not: str = ""

    def label(self) -> str:
        """How a decision was taken, for an add result's steps and ``stats``."""
        if self.judge is None:
            return f"rules ({self.why_not})"
        return f"judge {self.judge.version}"


@lru_cache(maxsize=8)
def choose(mode: str, path: str | None, encoder: str) -> Choice:
    """The judge for ``update.judge`` = ``mode`` over vectors of ``encoder``: the file at
    ``path`` (:class:`JudgeError` when it cannot serve: a file the user named is never
    passed over), else the wheel's for the encoder; none when ``mode`` is ``rules`` or the
    wheel has none for this encoder."""
    if mode == "rules":
        return Choice(None, "update.judge is rules")
    if path is not None:
        try:
            return Choice(load(Path(path), encoder))
        except JudgeError as exc:
            raise JudgeError(f"update.judge_path: {exc}") from None
    shipped = default_path(encoder)
    if not shipped.is_file():
        return Choice(None, f"no judge ships for vectors of {encoder}")
    try:
        return Choice(load(shipped, encoder))
    except JudgeError as exc:  # e.g. fitted on another release of the encoder
        return Choice(None, str(exc))
