"""The second look at a search's best candidates (settings ``retrieval.rerank``).

The first ranking is made on slim candidates; this one reads the texts of the best few and
re-scores them before the cut to ``top_k``:

- **across scripts**: a memory written in another script than the query (CJK vs Latin) shares
  none of its words, so its missing keyword score says nothing against it. It is given
  (``cross_keyword``) the best S_kw of the candidates in the query's script that are no closer
  to the query in meaning: it never loses to a memory only for sharing words it could not
  share. Its own S_kw counts where higher (identifiers such as ``pg-2`` match across
  languages), and where no candidate matches words, nothing changes.
- **a second opinion** (off by default): the second model's cosine, standardised among the
  candidates of the same script, may raise S_sem (never lower it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Literal

import numpy as np

from ..embeddings.second import SecondModel
from ..errors import EmbedderError
from ..model import ScoreBreakdown
from ..settings import RerankSettings
from ..stores.base import Candidate
from ..text.analyzer import CACHED_TEXT_MAX

Script = Literal["cjk", "latin"]
Ranked = tuple[float, Candidate, ScoreBreakdown]

_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_LATIN_CHAR = re.compile(r"[A-Za-z\u00c0-\u024f]")
# A CJK character carries about a word, a Latin word about five letters: a text is CJK when
# its CJK characters are at least a fifth as many as its Latin letters.
_LETTERS_PER_CJK = 5


def script(text: str) -> Script | None:
    """``cjk`` or ``latin``: the script most of ``text``'s words are written in (None: no
    letters at all). Kept for short texts: it reads every term of every hit
    (``retrieval.evidence``)."""
    return _script(text) if len(text) <= CACHED_TEXT_MAX else _script.__wrapped__(text)


@lru_cache(maxsize=16_384)
def _script(text: str) -> Script | None:
    cjk = len(_CJK_CHAR.findall(text))
    latin = len(_LATIN_CHAR.findall(text))
    if not cjk and not latin:
        return None
    return "cjk" if cjk * _LETTERS_PER_CJK >= latin else "latin"


class Reranker:
    """Re-scores the best candidates of one search; ``second`` gives the second model (or
    None) when first needed."""

    def __init__(self, cfg: RerankSettings, second: Callable[[], SecondModel | None]) -> None:
        self.cfg = cfg
        self._second = second

    def active(self) -> bool:
        return self.cfg.cross_script or self.cfg.second_opinion

    def pool(self, ranked: Sequence[Ranked], cosines: dict[str, float]) -> list[int]:
        """Positions in ``ranked`` (sorted best first) to look at again: the first ``depth``
        and the ``vector_depth`` nearest by cosine."""
        picked = dict.fromkeys(range(min(self.cfg.depth, len(ranked))))
        if self.cfg.vector_depth:
            near = sorted((i for i in range(len(ranked)) if i not in picked),
                          key=lambda i: -cosines.get(ranked[i][1].memory_id, -1.0))
            picked.update(dict.fromkeys(near[: self.cfg.vector_depth]))
        return list(picked)

    def rescore(self, query: str, ranked: list[Ranked], cosines: dict[str, float],
                total: Callable[[ScoreBreakdown], float],
                read: Callable[[list[str]], dict[str, str]]) -> list[Ranked]:
        """``ranked`` re-scored where the rules apply (``total``: a breakdown's score, as the
        first ranking computed it), sorted again. ``read`` gives the texts of ids."""
        if not ranked or not self.active():
            return ranked
        at = self.pool(ranked, cosines)
        contents = read([ranked[i][1].memory_id for i in at])
        at = [i for i in at if ranked[i][1].memory_id in contents]
        texts = [contents[ranked[i][1].memory_id] for i in at]
        qscript = script(query)
        scripts = [script(t) for t in texts]
        second = self._second_scores(query, texts, scripts) if self.cfg.second_opinion else None
        parts = [ranked[i][2] for i in at]
        if second is not None:
            w = self.cfg.second_weight
            for j, s2 in enumerate(second.tolist()):
                if not np.isnan(s2):
                    p = parts[j]
                    parts[j] = p.model_copy(update={"second_semantic": s2, "semantic": max(
                        p.semantic, (1.0 - w) * p.semantic + w * s2)})
        if self.cfg.cross_script and qscript is not None:
            same = [(p.semantic, p.keyword) for p, s in zip(parts, scripts) if s == qscript]
            for j, (p, s) in enumerate(zip(parts, scripts)):
                # Only a candidate near in meaning at all can be the other language's version:
                # among unrelated texts the nearest is often in the other script.
                near = cosines.get(ranked[at[j]][1].memory_id, -1.0) >= self.cfg.cross_min_cosine
                if s is not None and s != qscript and near:
                    best = max((kw for sem, kw in same if sem <= p.semantic), default=0.0)
                    parts[j] = p.model_copy(update={"cross_keyword":
                                                    best * self.cfg.cross_share})
        out = list(ranked)
        for i, p in zip(at, parts):
            if p is not ranked[i][2]:
                out[i] = (total(p), ranked[i][1], p)
        out.sort(key=lambda t: (-t[0], -t[1].created_at.timestamp()))
        return out

    def _second_scores(self, query: str, texts: list[str],
                       scripts: list[Script | None]) -> np.ndarray | None:
        """The second model's standing of each text among the texts of its script, 0..1
        (0.5 at their mean cosine, 1 at 3 standard deviations above); NaN where a script has
        fewer than ``second_min_group`` texts. None without a second model."""
        model = self._second()
        if model is None or not texts:
            return None
        try:
            cos = model.scores(query, texts)
        except EmbedderError:
            return None
        out = np.full(len(texts), np.nan, dtype=np.float64)
        for s in set(scripts):
            idx = [k for k, x in enumerate(scripts) if x == s]
            if len(idx) < self.cfg.second_min_group:
                continue
            group = cos[idx].astype(np.float64)
            sd = float(group.std())
            if sd <= 1e-9:
                continue
            out[idx] = np.clip(0.5 + (group - group.mean()) / sd / 6.0, 0.0, 1.0)
        return out
