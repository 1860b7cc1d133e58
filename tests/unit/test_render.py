"""The CLI's rendering of search hits (cli/render.py)."""

from __future__ import annotations

from rich.console import Console

from varvemem import Memory
from varvemem.cli.render import render_hits


def _text(hits: list) -> str:  # type: ignore[type-arg]
    console = Console(width=100, record=True, color_system=None)
    console.print(render_hits(hits))
    return console.export_text()


def test_a_hit_the_read_side_marks_says_so_under_its_content(mem: Memory) -> None:
    mem.add("客服热线周末开到下午五点")
    hit = mem.search("客服热线周末几点关门？", top_k=1)[0]
    assert "likely superseded" not in _text([hit])
    why = "likely superseded by mem_x (said 2026-11-20): judged an update (judge j: p=0.79)"
    marked = hit.model_copy(update={"scores": hit.scores.model_copy(update={"conflict": why})})
    lines = _text([marked]).splitlines()
    content = next(i for i, line in enumerate(lines) if "客服热线" in line)
    assert "likely superseded by mem_x (said 2026-11-20)" in lines[content + 1]
