"""Big documents (issue 18): ingested a batch at a time, committed as they go, resumable by
running the ingest again, with progress and a per-file size limit."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.conftest import stores_of

from varvemem import ConfigError, IngestProgress, Memory, Settings, ValidationError
from varvemem.text import chunk_markdown

BATCH = {"ingest_batch_chunks": 2}
TOPICS = ["Helm charts are pinned to a version before a release.",
          "The staging cluster eks-stg-2 is rebuilt every Monday.",
          "Rollbacks use helm rollback with the previous revision.",
          "部署前先检查集群的告警和延迟。",
          "Database backups run nightly and are restored monthly.",
          "Certificates rotate every ninety days through the ingress.",
          "The on-call engineer owns the pager for one week.",
          "Canary releases take ten percent of the traffic first."]


def handbook(changed: dict[int, str] | None = None, drop: int | None = None) -> str:
    parts = ["# Handbook\n"]
    for i, text in enumerate(TOPICS):
        if i == drop:
            continue
        parts.append(f"## Topic {i}\n\n{(changed or {}).get(i, text)}\n")
    return "\n".join(parts)


class Flaky:
    """The test embedder, failing on its ``fail_on``-th call (a crash mid-ingest)."""

    def __init__(self, inner: Any, fail_on: int) -> None:
        self.inner, self.fail_on, self.calls = inner, fail_on, 0
        self.model_id, self.dim = inner.model_id, inner.dim

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.calls == self.fail_on:
            raise KeyboardInterrupt  # Ctrl-C, say
        return self.inner.embed_documents(texts)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def chunks_of(mem: Memory, source: str) -> tuple[list[str], list[str]]:
    """The contents of the current chunks of ``source`` and the ids of its superseded ones."""
    recs = stores_of(mem).records.find_by_source(mem.settings.default_tenant, source,
                                                 include_superseded=True)
    return ([r.content for r in recs if r.valid_to is None],
            [r.memory_id for r in recs if r.valid_to is not None])


def memory(home: Path, embedder: Any, clock: Any, **update: Any) -> Memory:
    return Memory(settings=Settings.load(home=home, update={**BATCH, **update}),
                  embedder=embedder, clock=clock)


def test_an_interrupted_ingest_resumes_and_invalidates_nothing(home: Path, embedder: Any,
                                                                clock: Any, tmp_path: Path) -> None:
    doc = tmp_path / "handbook.md"
    doc.write_text(handbook(), "utf-8")
    source = f"document:{doc.resolve()}"
    want = [c for _, c in chunk_markdown(handbook(), 1200)]
    assert len(want) == len(TOPICS)
    with memory(home, Flaky(embedder, fail_on=2), clock) as mem, \
            pytest.raises(KeyboardInterrupt):
        mem.ingest(doc)
    with memory(home, embedder, clock) as mem:
        current, superseded = chunks_of(mem, source)
        assert current == want[:2] and not superseded  # the first batch, committed
        report = mem.ingest(doc)
        assert report.kept == 2 and len(report.added) == len(TOPICS) - 2
        assert not report.invalidated and report.unchanged_files == 0
        current, superseded = chunks_of(mem, source)
        assert Counter(current) == Counter(want) and not superseded  # each chunk once
        assert mem.ingest(doc).unchanged_files == 1  # now marked complete


def test_a_progress_callback_that_stops_the_ingest_leaves_it_resumable(
        home: Path, embedder: Any, clock: Any) -> None:
    seen: list[IngestProgress] = []

    def stop(p: IngestProgress) -> None:
        seen.append(p)
        if p.added >= 4:
            raise KeyboardInterrupt

    with memory(home, embedder, clock) as mem:
        with pytest.raises(KeyboardInterrupt):
            mem.ingest_text(handbook(), "handbook.md", progress=stop)
        assert [p.added for p in seen] == [0, 2, 4]
        assert len(chunks_of(mem, "handbook.md")[0]) == 4
        seen.clear()
        report = mem.ingest_text(handbook(), "handbook.md", progress=seen.append)
        assert report.kept == 4 and len(report.added) == 4 and not report.invalidated
        last = seen[-1]
        assert last.done and last.chunks == len(TOPICS) and last.added == 4
        assert last.bytes_done == last.bytes_total == len(handbook().encode("utf-8"))
        assert all(a.bytes_done <= b.bytes_done for a, b in pairwise(seen))


def test_a_changed_big_document_supersedes_across_batches(home: Path, embedder: Any,
                                                          clock: Any) -> None:
    with memory(home, embedder, clock) as mem:
        first = mem.ingest_text(handbook(), "handbook.md", tags=["handbook"])
        old = {mem.get(i).metadata["section"]: i for i in first.added}
        changed = {1: "The staging cluster eks-stg-3 is rebuilt every Friday.",
                   6: "The on-call engineer owns the pager for two weeks now."}
        second = mem.ingest_text(handbook(changed, drop=4), "handbook.md")
        assert second.kept == len(TOPICS) - 3 and len(second.added) == 2
        new = {mem.get(i).metadata["section"]: i for i in second.added}
        assert set(second.invalidated) == {old["Topic 1"], old["Topic 4"], old["Topic 6"]}
        for section in ("Topic 1", "Topic 6"):  # Topic 1 in an early batch, 6 in the last
            was, now = mem.get(old[section]), mem.get(new[section])
            assert was.superseded_by == now.memory_id and was.valid_to == now.valid_from
            assert "handbook" in now.tags
            assert any(f"supersedes {was.memory_id}" in h.reason
                       for h in mem.history(now.memory_id))
        assert mem.get(old["Topic 4"]).valid_to is not None
        current, _ = chunks_of(mem, "handbook.md")
        assert Counter(current) == Counter(c for _, c in chunk_markdown(
            handbook(changed, drop=4), 1200))


def test_an_interrupted_reingest_keeps_the_old_version_served(home: Path, embedder: Any,
                                                              clock: Any) -> None:
    changed = {i: f"{t} (revised)" for i, t in enumerate(TOPICS)}
    with memory(home, embedder, clock) as mem:
        first = mem.ingest_text(handbook(), "handbook.md")
    with memory(home, Flaky(embedder, fail_on=2), clock) as mem, \
            pytest.raises(KeyboardInterrupt):
        mem.ingest_text(handbook(changed), "handbook.md")
    with memory(home, embedder, clock) as mem:
        current, superseded = chunks_of(mem, "handbook.md")
        assert len(current) == len(TOPICS) + 2 and not superseded  # nothing invalidated yet
        report = mem.ingest_text(handbook(changed), "handbook.md")
        assert report.kept == 2 and len(report.added) == len(TOPICS) - 2
        assert set(report.invalidated) == set(first.added)
        current, superseded = chunks_of(mem, "handbook.md")
        assert sorted(current) == sorted(c for _, c in chunk_markdown(handbook(changed), 1200))
        for i in first.added:  # each old chunk succeeded by its section's new one
            was = mem.get(i)
            assert was.superseded_by and \
                mem.get(was.superseded_by).metadata["section"] == was.metadata["section"]


def test_files_over_the_size_limit(home: Path, embedder: Any, clock: Any,
                                   tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "small.md").write_text("# Small\n\nPin chart versions.\n", "utf-8")
    (docs / "big.md").write_text("# Big\n\n" + "word " * 400, "utf-8")
    with memory(home, embedder, clock, ingest_max_file_bytes=1024) as mem:
        report = mem.ingest(docs)
        assert report.files == 1 and len(report.added) == 1
        assert len(report.skipped) == 1 and "big.md" in report.skipped[0]
        assert "update.ingest_max_file_bytes" in report.skipped[0]
        with pytest.raises(ValidationError, match=r"update\.ingest_max_file_bytes"):
            mem.ingest(docs / "big.md")
        with pytest.raises(ValidationError, match=r"update\.ingest_max_file_bytes"):
            mem.ingest_text("# Big\n\n" + "字" * 400, "big.md")  # 1,200 bytes in UTF-8
    with pytest.raises(ConfigError, match=r"update\.ingest_max_file_bytes"):
        Settings.load(home=home, update={"ingest_max_file_bytes": 10})
