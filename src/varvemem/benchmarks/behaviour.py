"""``varvemem bench behaviour``: does the engine learn correctly from people's own words?

Offline, default settings, default embedder: each family gets a home of its own under the
benchmark's folder, a settable clock, and one tenant per case (tenants isolate memories,
Q&A pairs and the answer cache). The cases are the templates of :mod:`.behaviour_gen` (seeded)
and the hand-written ones in ``behaviour_cases.json``. The benchmark measures; nothing here
tunes the engine, and every score can fail (``tests/benchmarks/test_behaviour.py``).
"""

from __future__ import annotations

import functools
import json
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from importlib import resources
from pathlib import Path
from typing import Any

from ..api import Memory
from ..model import AddResult
from .behaviour_gen import CROSS_STORE, cross_bank, generate

Progress = Callable[[str, int, int], None]
Outcome = dict[str, Any]

# Wednesday 2026-03-11 10:00 UTC: "now" for every family (time_words' dates count back from it).
NOW = datetime(2026, 3, 11, 10, 0, tzinfo=timezone.utc)
TOP = 5  # "served as current": in the default search's top 5
LANGS = ("en", "zh")


class Clock:
    """A clock the benchmark moves by hand."""

    def __init__(self, start: datetime = NOW) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> datetime:
        self.now += timedelta(**kw)
        return self.now


@dataclass
class Case:
    family: str
    lang: str
    id: str
    origin: str  # "template" or "hand"
    data: dict[str, Any]


def load_hand() -> list[Case]:
    """The hand-written cases (package data)."""
    text = resources.files("varvemem.benchmarks").joinpath("behaviour_cases.json").read_text(
        encoding="utf-8")
    return [Case(c["family"], c["lang"], c["id"], "hand", c["data"])
            for c in json.loads(text)["cases"]]


def all_cases(seed: int = 0) -> list[Case]:
    """Template cases for ``seed``, then the hand-written ones."""
    return [Case(c["family"], c["lang"], c["id"], "template", c["data"])
            for c in generate(seed)] + load_hand()


def select(cases: Sequence[Case], families: Sequence[str] | None = None,
           lang: str | None = None, limit: int | None = None) -> list[Case]:
    """The cases of ``families`` in ``lang``; ``limit``: at most that many per family and
    language, hand-written and template cases alternating."""
    out: list[Case] = []
    for fam in FAMILIES:
        if families and fam not in families:
            continue
        for lg in LANGS:
            if lang and lg != lang:
                continue
            hand = [c for c in cases if c.family == fam and c.lang == lg and c.origin == "hand"]
            tpl = [c for c in cases if c.family == fam and c.lang == lg and c.origin != "hand"]
            mixed: list[Case] = []
            for i in range(max(len(hand), len(tpl))):
                mixed.extend(x[i] for x in (hand, tpl) if i < len(x))
            out.extend(mixed[:limit] if limit else mixed)
    return out


# --- helpers -------------------------------------------------------------------------------------

def _ids(mem: Memory, query: str, tenant: str, k: int = TOP) -> list[str]:
    return [h.memory.memory_id for h in mem.search(query, tenant=tenant, top_k=k)]


def _write(mem: Memory, clock: Clock, text: str, mode: str, tenant: str,
           session: str) -> AddResult:
    """One statement as knowledge, as a dialogue turn, or as an event."""
    if mode == "dialogue":
        return mem.add_messages([{"role": "user", "content": text}], tenant=tenant,
                                session=session)[0]
    if mode == "event":
        return mem.add_event({"title": "note", "message": text}, tenant=tenant)
    return mem.add(text, type="knowledge", tenant=tenant)


def _current(mem: Memory, memory_id: str, tenant: str) -> bool:
    rec = mem.get(memory_id, tenant=tenant)
    return rec.valid_to is None and rec.superseded_by is None


# --- families: each runs its cases and returns one outcome per case -------------------------------

def run_update(mem: Memory, clock: Clock, cases: Sequence[Case]) -> list[Outcome]:
    """update, transition and negation: the old statement, later the new one; then the
    question. ``data.new_tenant`` (tests only) writes the new one elsewhere."""
    out = []
    for n, c in enumerate(cases):
        d, tenant = c.data, f"c{n}"
        mode = d.get("mode", "knowledge")
        old = _write(mem, clock, d["old"], mode, tenant, "s-old")
        clock.advance(hours=d.get("gap_hours", 24))
        new = _write(mem, clock, d["new"], mode, d.get("new_tenant", tenant),
                     "s-old" if d.get("gap_hours", 24) < 2 else "s-new")
        top = _ids(mem, d["query"], tenant)
        distinct = new.memory_id != old.memory_id
        out.append({"old_served": old.memory_id in top,
                    "new_top1": distinct and bool(top) and top[0] == new.memory_id,
                    "superseded": old.memory_id in new.superseded,
                    "merged": not distinct or new.status != "created"})
    return out


def run_distinct(mem: Memory, clock: Clock, cases: Sequence[Case]) -> list[Outcome]:
    out = []
    for n, c in enumerate(cases):
        tenant = f"c{n}"
        results = []
        for r in c.data["records"]:
            results.append(mem.add(r["content"], user=r.get("user"), tenant=tenant))
            clock.advance(minutes=10)
        ids = [r.memory_id for r in results]
        merged = len(set(ids)) < len(ids) or any(r.status != "created" for r in results)
        not_current = [i for i in dict.fromkeys(ids) if not _current(mem, i, tenant)]
        exact = [_ids(mem, r["content"], tenant, 1)[:1] == [i]
                 for r, i in zip(c.data["records"], ids)]
        out.append({"wrong": merged or bool(not_current), "merged": merged,
                    "superseded": bool(not_current), "exact_top1": sum(exact) / len(exact)})
    return out


def run_near_duplicate(mem: Memory, clock: Clock, cases: Sequence[Case]) -> list[Outcome]:
    out = []
    for n, c in enumerate(cases):
        d, tenant = c.data, f"c{n}"
        if d["target"] == "qa":
            a = mem.save_qa(d["a"], d["answer"], 0.9, tenant=tenant)
            clock.advance(minutes=5)
            b = mem.save_qa(d["b"], d["answer"], 0.9, tenant=tenant)
        else:
            a = mem.add(d["a"], tenant=tenant).memory_id
            clock.advance(minutes=5)
            b = mem.add(d["b"], tenant=tenant).memory_id
        out.append({"separate": a != b, "kind": d["kind"], "target": d["target"]})
    return out


def run_faq_reuse(mem: Memory, clock: Clock, cases: Sequence[Case]) -> list[Outcome]:
    out = []
    for n, c in enumerate(cases):
        d, tenant = c.data, f"c{n}"
        ids = [mem.save_qa(p["question"], p["answer"], p.get("score", 0.9), tenant=tenant)
               for p in d["pairs"]]
        clock.advance(minutes=5)
        res = mem.ask(d["probe"], tenant=tenant)
        matched = (res.matched or {}).get("id")
        expect = d.get("expect")
        reused = res.route == "reuse"
        right = reused and expect is not None and matched == ids[expect]
        out.append({"positive": expect is not None, "reused": reused, "right": right,
                    "route": res.route})
    return out


def run_chit_chat(mem: Memory, clock: Clock, cases: Sequence[Case]) -> list[Outcome]:
    out = []
    for n, c in enumerate(cases):
        res = mem.ask(c.data["text"], tenant=f"c{n}")
        out.append({"chit_chat": bool(c.data["chit_chat"]), "skipped": res.route == "skip"})
    return out


def run_unrelated(mem: Memory, clock: Clock, cases: Sequence[Case]) -> list[Outcome]:
    out = []
    for n, c in enumerate(cases):
        tenant = f"c{n}"
        mem.add_many([{"content": t} for t in c.data["store"]], tenant=tenant)
        hits = mem.search(c.data["query"], tenant=tenant, top_k=TOP)
        ctx = mem.context(c.data["query"], tenant=tenant)
        out.append({"empty": not hits, "hits": len(hits), "kind": c.data.get("kind", ""),
                    "context_lists_memories": "\n- " in ctx,
                    "context": ctx if n == 0 else None})
    return out


def run_time_words(mem: Memory, clock: Clock, cases: Sequence[Case]) -> list[Outcome]:
    out = []
    for n, c in enumerate(cases):
        d, tenant = c.data, f"c{n}"
        ids = []
        for i, m in enumerate(d["memories"]):
            at = NOW - timedelta(days=m["days_ago"], hours=-1 - i % 3)
            res = mem.add_messages([{"role": "user", "content": m["content"]}], tenant=tenant,
                                   session=f"day-{m['days_ago']}", created_at=at)
            ids.append(res[0].memory_id)
        top = _ids(mem, d["query"], tenant)
        target = ids[d.get("target", 0)]
        distract = [i for i, m in zip(ids, d["memories"]) if m.get("distractor")]
        out.append({"top1": top[:1] == [target], "top3": target in top[:3],
                    "distractor_first": bool(top) and top[0] in distract,
                    "has_distractor": bool(distract)})
    return out


def run_cross_language(mem: Memory, clock: Clock, cases: Sequence[Case]) -> list[Outcome]:
    out = []
    for n, c in enumerate(cases):
        d, tenant = c.data, f"c{n}"
        texts = list(d["memories"])
        if len(texts) < CROSS_STORE:  # a hand-written case: service facts around it
            texts += cross_bank(random.Random(f"bank:{c.id}"), CROSS_STORE - len(texts))
        res = mem.add_many([{"content": t, "type": "knowledge"} for t in texts],
                           tenant=tenant)
        top = _ids(mem, d["query"], tenant)
        out.append({"recall5": res[d.get("target", 0)].memory_id in top})
    return out


def _play(mem: Memory, clock: Clock, steps: Iterable[dict[str, Any]], tenant: str,
          session: str) -> list[str]:
    ids = []
    for s in steps:
        if s["kind"] == "tool":
            ids.append(mem.add_tool_call(s["name"], s.get("args") or {}, s["result"],
                                         tenant=tenant, session=session).memory_id)
        elif s["kind"] == "event":
            ids.append(mem.add_event(s["event"], tenant=tenant).memory_id)
        else:
            ids.append(mem.add_messages([{"role": s["role"], "content": s["content"]}],
                                        tenant=tenant, session=session)[0].memory_id)
        clock.advance(minutes=2)
    return ids


def _found(mem: Memory, query: str, tenant: str, expect: Sequence[str]) -> bool:
    """A hit in the top 3 that says every expected word (the turn itself or an experience
    abstracted from it)."""
    for h in mem.search(query, tenant=tenant, top_k=3):
        text = h.memory.content.lower()
        if all(e.lower() in text for e in expect):
            return True
    return False


LEARNED_DAYS = (7, 30)


def run_learned(mem: Memory, clock: Clock, cases: Sequence[Case],
                days: int = 30) -> list[Outcome]:
    """Every story in its own tenant (with two other stories around it), then the lifecycle
    on its schedule, day by day, until ``days``; then each question."""
    for n, c in enumerate(cases):
        tenant = f"c{n}"
        for k, noise in enumerate(c.data.get("noise", [])):
            _play(mem, clock, noise, tenant, f"noise-{k}")
            clock.advance(minutes=40)
        _play(mem, clock, c.data["steps"], tenant, "story")
    start = clock.now
    clock.advance(hours=1)
    while True:
        due = mem.due_jobs()
        if due:
            mem.consolidate(due)
        if clock.now - start >= timedelta(days=days):
            break
        clock.advance(hours=6)
    return [{f"top3_{days}d": _found(mem, c.data["question"], f"c{n}", c.data["expect"])}
            for n, c in enumerate(cases)]


# --- scoring ---------------------------------------------------------------------------------------

def _share(outcomes: Sequence[Outcome], key: str,
           where: Callable[[Outcome], bool] | None = None) -> float | None:
    rows = [o for o in outcomes if where is None or where(o)]
    return sum(bool(o[key]) for o in rows) / len(rows) if rows else None


def score_update(o: Sequence[Outcome]) -> dict[str, Any]:
    return {"old_served": _share(o, "old_served"), "new_top1": _share(o, "new_top1"),
            "superseded": _share(o, "superseded"), "merged": _share(o, "merged")}


def score_distinct(o: Sequence[Outcome]) -> dict[str, Any]:
    exact = [x["exact_top1"] for x in o]
    return {"wrong": _share(o, "wrong"), "merged": _share(o, "merged"),
            "superseded": _share(o, "superseded"),
            "exact_top1": sum(exact) / len(exact) if exact else None}


def _is(key: str) -> Callable[[Outcome], bool]:
    return lambda x: bool(x["kind"] == key or x["target"] == key)


def _has(key: str) -> Callable[[Outcome], bool]:
    return lambda x: key in x


def score_near_duplicate(o: Sequence[Outcome]) -> dict[str, Any]:
    out: dict[str, Any] = {"separate": _share(o, "separate")}
    for key in sorted({x["kind"] for x in o} | {x["target"] for x in o}):
        out[f"separate_{key}"] = _share(o, "separate", _is(key))
    return out


def score_faq_reuse(o: Sequence[Outcome]) -> dict[str, Any]:
    reused = [x for x in o if x["reused"]]
    pos = [x for x in o if x["positive"]]
    return {"precision": sum(x["right"] for x in reused) / len(reused) if reused else None,
            "recall": sum(x["right"] for x in pos) / len(pos) if pos else None,
            "wrong_reuse": sum(1 for x in reused if not x["right"]),
            "positives": len(pos), "negatives": len(o) - len(pos)}


def score_chit_chat(o: Sequence[Outcome]) -> dict[str, Any]:
    return {"recall": _share(o, "skipped", lambda x: bool(x["chit_chat"])),
            "questions_skipped": sum(1 for x in o if x["skipped"] and not x["chit_chat"]),
            "questions": sum(1 for x in o if not x["chit_chat"])}


def score_unrelated(o: Sequence[Outcome]) -> dict[str, Any]:
    hits = [x["hits"] for x in o]
    out: dict[str, Any] = {
        "empty": _share(o, "empty"),
        "empty_off_topic": _share(o, "empty", lambda x: x["kind"] == "off_topic"),
        "empty_absent_subject": _share(o, "empty", lambda x: x["kind"] == "absent_subject"),
        "context_lists_memories": _share(o, "context_lists_memories"),
        "mean_hits": sum(hits) / len(hits) if hits else None}
    example = next((x["context"] for x in o if x.get("context")), None)
    if example is not None:
        out["context_example"] = example[:300]
    return out


def score_time_words(o: Sequence[Outcome]) -> dict[str, Any]:
    return {"top1": _share(o, "top1"), "top3": _share(o, "top3"),
            "distractor_first": _share(o, "distractor_first", lambda x: x["has_distractor"])}


def score_cross_language(o: Sequence[Outcome]) -> dict[str, Any]:
    return {"recall@5": _share(o, "recall5")}


def score_learned(o: Sequence[Outcome]) -> dict[str, Any]:
    return {f"top3_{d}d": _share(o, f"top3_{d}d", _has(f"top3_{d}d"))
            for d in LEARNED_DAYS}


@dataclass
class Family:
    runner: Callable[[Memory, Clock, Sequence[Case]], list[Outcome]]
    scorer: Callable[[Sequence[Outcome]], dict[str, Any]]
    targets: dict[str, tuple[str, float]]  # metric -> ("<=" or ">=", bound)
    meaning: str


FAMILIES: dict[str, Family] = {
    "update": Family(run_update, score_update, {"old_served": ("<=", 0.02)},
                     "old value served as current (top 5) after a new value without a cue word"),
    "transition": Family(run_update, score_update, {"old_served": ("<=", 0.02)},
                         "old value served as current after 'moved from A to B', 'A → B', ..."),
    "after_change": Family(run_update, score_update, {"old_served": ("<=", 0.02)},
                           "the value a stated change gave ('migrated X to A') served as "
                           "current after a plain new value ('X is B')"),
    "negation": Family(run_update, score_update, {"old_served": ("<=", 0.02)},
                       "old statement served as current after 'no longer uses A'"),
    "distinct": Family(run_distinct, score_distinct, {"wrong": ("<=", 0.01)},
                       "distinct records wrongly superseded or merged"),
    "near_duplicate": Family(run_near_duplicate, score_near_duplicate,
                             {"separate": ("<=", 0.02)},
                             "restatements (case, width, punctuation, spacing, particle) "
                             "kept as separate memories or pairs"),
    "faq_reuse": Family(run_faq_reuse, score_faq_reuse,
                        {"precision": (">=", 0.99), "recall": (">=", 0.90)},
                        "ask reuses the right stored pair (precision) for paraphrases (recall)"),
    "chit_chat": Family(run_chit_chat, score_chit_chat,
                        {"recall": (">=", 0.95), "questions_skipped": ("<=", 0)},
                        "chit-chat routed to skip; real questions skipped (must be 0)"),
    "unrelated": Family(run_unrelated, score_unrelated, {"empty": (">=", 0.95)},
                        "search returns nothing for a question the store cannot answer"),
    "time_words": Family(run_time_words, score_time_words,
                         {"top1": (">=", 0.80), "top3": (">=", 0.95),
                          "distractor_first": ("<=", 0.0)},
                         "the memory from the named time at #1 / top 3; a turn that only "
                         "contains the time word ranked first"),
    "cross_language": Family(run_cross_language, score_cross_language,
                             {"recall@5": (">=", 0.80)},
                             "a question in one language finds the memory in the other (top 5)"),
    "learned": Family(run_learned, score_learned,
                      {"top3_7d": (">=", 0.90), "top3_30d": (">=", 0.90)},
                      "what a story worked out is in the top 3 after 7 and 30 days of "
                      "the lifecycle"),
}


def verdict(metrics: dict[str, Any], targets: dict[str, tuple[str, float]]) -> bool | None:
    """Whether every target is met (None when a metric has no cases)."""
    ok = True
    for name, (op, bound) in targets.items():
        v = metrics.get(name)
        if v is None:
            return None
        ok = ok and (v <= bound if op == "<=" else v >= bound)
    return ok


def _fmt_target(targets: dict[str, tuple[str, float]]) -> str:
    def show(v: float, name: str) -> str:
        return f"{v:g}" if name.endswith("skipped") else f"{100 * v:g} %"
    return "; ".join(f"{n} {op} {show(b, n)}" for n, (op, b) in targets.items())


def run_family(root: Path, family: str, cases: Sequence[Case],
               progress: Progress | None = None) -> list[Outcome]:
    """The outcomes of ``cases`` (one family) in a fresh home under ``root``."""
    spec = FAMILIES[family]
    outcomes: list[Outcome] = []
    homes: list[tuple[str, Callable[[Memory, Clock, Sequence[Case]], list[Outcome]]]]
    if family == "learned":  # one home per horizon: the 7-day question is no use at day 30
        homes = [(f"{family}-{d}d", functools.partial(run_learned, days=d))
                 for d in LEARNED_DAYS]
    else:
        homes = [(family, spec.runner)]
    merged: list[Outcome] = [{} for _ in cases]
    for name, runner in homes:
        clock = Clock()
        mem = Memory(home=root / name, clock=clock)
        try:
            for row, o in zip(merged, runner(mem, clock, cases)):
                row.update(o)
        finally:
            mem.close()
        if progress:
            progress(family, len(cases), len(cases))
    for c, o in zip(cases, merged):
        outcomes.append({"id": c.id, "lang": c.lang, "origin": c.origin, **o})
    return outcomes


def summarise(family: str, outcomes: Sequence[Outcome]) -> dict[str, Any]:
    spec = FAMILIES[family]
    by_lang: dict[str, Any] = {}
    for lg in (*LANGS, "all"):
        rows = [o for o in outcomes if lg == "all" or o["lang"] == lg]
        if not rows:
            continue
        m = spec.scorer(rows)
        by_lang[lg] = {"cases": len(rows),
                       "template": sum(1 for o in rows if o["origin"] == "template"),
                       "hand": sum(1 for o in rows if o["origin"] == "hand"),
                       "metrics": m, "pass": verdict(m, spec.targets)}
    return {"meaning": spec.meaning,
            "targets": {k: {"op": op, "value": v} for k, (op, v) in spec.targets.items()},
            "target_text": _fmt_target(spec.targets), "by_lang": by_lang}


def run(root: Path, *, families: Sequence[str] | None = None, lang: str | None = None,
        limit: int | None = None, seed: int = 0,
        progress: Progress | None = None) -> dict[str, Any]:
    """Run the selected cases, one home per family under ``root``; the figures as a dict."""
    unknown = [f for f in families or [] if f not in FAMILIES]
    if unknown:
        from ..errors import ValidationError
        raise ValidationError(f"unknown famil{'ies' if len(unknown) > 1 else 'y'} "
                              f"{', '.join(unknown)}; known: {', '.join(FAMILIES)}")
    cases = select(all_cases(seed), families, lang, limit)
    started = time.perf_counter()
    out: dict[str, Any] = {"benchmark": "behaviour", "seed": seed, "limit": limit,
                           "lang": lang, "cases": {
                               "template": sum(1 for c in cases if c.origin == "template"),
                               "hand": sum(1 for c in cases if c.origin == "hand")},
                           "families": {}}
    for fam in FAMILIES:
        chosen = [c for c in cases if c.family == fam]
        if not chosen:
            continue
        t0 = time.perf_counter()
        outcomes = run_family(root, fam, chosen, progress)
        summary = summarise(fam, outcomes)
        summary["seconds"] = round(time.perf_counter() - t0, 2)
        summary["failures"] = [o["id"] for o in outcomes if _failed(fam, o)][:20]
        out["families"][fam] = summary
    out["seconds"] = round(time.perf_counter() - started, 2)
    return out


def _failed(family: str, o: Outcome) -> bool:
    """Whether one case went the wrong way (for the list of failing case ids)."""
    if family in ("update", "transition", "after_change", "negation"):
        return bool(o["old_served"])
    if family == "distinct":
        return bool(o["wrong"])
    if family == "near_duplicate":
        return bool(o["separate"])
    if family == "faq_reuse":
        return bool(o["right"] != o["positive"] or (o["reused"] and not o["right"]))
    if family == "chit_chat":
        return bool(o["skipped"] != o["chit_chat"])
    if family == "unrelated":
        return not o["empty"]
    if family == "time_words":
        return not o["top1"] or bool(o["distractor_first"])
    if family == "cross_language":
        return not o["recall5"]
    return not all(o.get(f"top3_{d}d", True) for d in LEARNED_DAYS)
