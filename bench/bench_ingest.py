"""Document ingest of one big Markdown file: seconds, peak RSS and chunks (issue 18).

Generates a deterministic Markdown file of ``--mb`` megabytes (sections with headings and
paragraphs, English and Chinese mixed) in a temporary folder and ingests it into a fresh home
with the default settings and embedder through :meth:`varvemem.Memory.ingest`, in this process;
prints the seconds the ingest took (wall clock, and the process's CPU seconds, which depend
less on what else the machine runs), the process's peak RSS (``getrusage``) at its end and the
chunk count; with ``--again``, the seconds and peak of a second, unchanged ingest too. One
size per run, so the peak is that size's:

    .venv/bin/python bench/bench_ingest.py --mb 5
    .venv/bin/python bench/bench_ingest.py --mb 5 --again   # then re-ingest, unchanged
    .venv/bin/python bench/bench_ingest.py --mb 50 --hash-embedder  # the ingest alone

``--hash-embedder`` replaces the model by a hash of each text (64-d, no model to load), so the
figures are those of reading, chunking and storing: what grows with the file's size.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

WORDS = ("deploy", "cluster", "staging", "rollback", "pipeline", "helm", "chart", "version",
         "pin", "alert", "latency", "budget", "runbook", "owner", "service", "queue", "retry",
         "timeout", "canary", "release", "database", "replica", "backup", "restore", "token",
         "secret", "rotate", "ingress", "certificate", "metrics", "dashboard", "oncall")
HANZI = ("部署", "集群", "回滚", "流水线", "版本", "告警", "延迟", "负责人", "服务", "队列",
         "重试", "超时", "发布", "数据库", "备份", "恢复", "证书", "监控", "值班", "配置")


def paragraph(rng: random.Random) -> str:
    if rng.random() < 0.25:  # a Chinese paragraph
        return "，".join("".join(rng.choice(HANZI) for _ in range(rng.randint(2, 5)))
                        for _ in range(rng.randint(6, 20))) + "。"
    sentences = []
    for _ in range(rng.randint(2, 6)):
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 16))]
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), f"eks-stg-{rng.randint(1, 99)}")
        sentences.append(" ".join(words).capitalize() + ".")
    return " ".join(sentences)


def write_document(path: Path, size: int, seed: int = 18) -> None:
    """About ``size`` bytes of Markdown: a title, ``##`` sections with ``###`` subsections;
    written a section at a time, so making it adds nothing to the peak measured."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        total = f.write("# Operations handbook\n")
        section = 0
        while total < size:
            section += 1
            head = f"\n## {section}. {rng.choice(WORDS).title()} {rng.choice(HANZI)}\n\n"
            if rng.random() < 0.5:
                head += f"### {rng.choice(WORDS)} {rng.choice(WORDS)}\n\n"
            body = "\n\n".join(paragraph(rng) for _ in range(rng.randint(1, 8))) + "\n"
            f.write(head + body)
            total += len((head + body).encode("utf-8"))


def hash_embedder() -> Any:
    import numpy as np

    from varvemem.embeddings import Embedder

    class HashEmbedder(Embedder):
        model_id, dim = "bench-hash-64", 64

        def embed_documents(self, texts: Any) -> Any:
            out = np.stack([np.random.default_rng(zlib.crc32(t.encode("utf-8")))
                            .standard_normal(64).astype(np.float32) for t in texts]) \
                if texts else np.zeros((0, 64), np.float32)
            return out / np.linalg.norm(out, axis=1, keepdims=True).clip(1e-9)

    return HashEmbedder()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=1.0, help="file size in megabytes (MiB)")
    ap.add_argument("--again", action="store_true", help="re-ingest the unchanged file after")
    ap.add_argument("--hash-embedder", action="store_true", help="no model: a hash per text")
    args = ap.parse_args()
    from varvemem import Memory

    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp, "handbook.md")
        write_document(doc, int(args.mb * 1024 * 1024))
        embedder = hash_embedder() if args.hash_embedder else None
        with Memory(home=Path(tmp, "home"), embedder=embedder) as mem:
            mem.embedder().embed_documents(["warm up"])  # the model's load is not the ingest's
            t0, c0 = time.perf_counter(), time.process_time()
            report = mem.ingest(doc)
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
            out: dict[str, Any] = {
                "mb": args.mb, "bytes": doc.stat().st_size, "seconds": round(seconds, 2),
                "cpu_seconds": round(cpu, 2), "chunks": len(report.added)}
            out["peak_rss_mb"] = round(peak_mb(), 1)  # the ingest's (before any re-ingest)
            if args.again:
                t0 = time.perf_counter()
                again = mem.ingest(doc)
                out["again_seconds"] = round(time.perf_counter() - t0, 2)
                out["again_unchanged"] = again.unchanged_files
    if args.again:
        out["again_peak_rss_mb"] = round(peak_mb(), 1)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
