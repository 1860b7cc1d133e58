"""The CLI's ingest progress bar: a task per file (bytes read, chunks), one for the files."""

from __future__ import annotations

import io

from rich.console import Console

from varvemem import IngestProgress
from varvemem.cli import memories


def test_the_bar_follows_files_and_batches(monkeypatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(memories, "console", Console(file=out, force_terminal=True, width=100))
    with memories._IngestBar() as bar:
        for n, name in enumerate(["a [b].md", "c.md"], 1):
            src = f"document:/docs/{name}"
            bar.show(IngestProgress(src, n, 2, 0, 1000, 0, 0))
            bar.show(IngestProgress(src, n, 2, 500, 1000, 64, 64))
            bar.show(IngestProgress(src, n, 2, 1000, 1000, 90, 70, done=True))
        tasks = {t.description: t for t in bar.progress.tasks}
        assert set(tasks) == {"files", "c.md"}  # a finished file's task makes room
        assert tasks["files"].completed == 2 and tasks["c.md"].completed == 1000
        assert tasks["c.md"].fields["done"] == "1.0 kB/1.0 kB, 90 chunks, 70 new"
        assert tasks["files"].fields["done"] == "2/2"
    assert "a [b].md" in out.getvalue()  # shown as it is, no markup
