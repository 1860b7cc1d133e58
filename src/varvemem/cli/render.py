"""Search hits for a terminal or a pipe: one block per hit, full ids, content clipped to a few
lines of the width at hand (the CLI's ``search`` and ``qa search``, and the demo); and the
hanging indent the other listings wrap their lines with."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text

if TYPE_CHECKING:
    from ..model import SearchHit

INDENT = "    "


class Mark(NamedTuple):
    """What a caller adds to a hit's first line: a label after the id, and a rich style for
    the whole line (either may be empty)."""

    label: str = ""
    style: str = ""


HitMarker = Callable[["SearchHit"], "str | Mark | None"]
"""Called with each hit: a label (or a :class:`Mark`) for its first line, or None."""


def render_hits(hits: Sequence[SearchHit], *, top: int | None = None, max_chars: int = 400,
                lines: int = 3, marker: HitMarker | None = None) -> Group:
    """The first ``top`` hits (all by default), each as: rank, score, type and full id on one
    line; the content, at most ``max_chars`` characters wrapped to at most ``lines`` lines;
    its score components (sem, kw, tag, rec, imp, rel; ttl and quality when they count) and
    the channels that found it (on a line of their own when they do not fit beside them).
    ``marker`` may label and style a hit's first line."""
    blocks: list[RenderableType] = []
    for rank, hit in enumerate(hits[:top] if top is not None else hits, 1):
        if blocks:
            blocks.append(Text(""))
        mark = marker(hit) if marker else None
        blocks.append(_Hit(rank, hit, max_chars, lines,
                           Mark(mark) if isinstance(mark, str) else mark))
    return Group(*blocks)


def clip(text: str, max_chars: int) -> str:
    """``text`` on one line (whitespace collapsed), cut to ``max_chars`` with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= max_chars else text[: max(max_chars - 1, 0)] + "…"


class _Hit:
    """One hit; the content is wrapped when rendered, to the width of the console."""

    def __init__(self, rank: int, hit: SearchHit, max_chars: int, lines: int,
                 mark: Mark | None) -> None:
        self.rank, self.hit, self.max_chars, self.lines, self.mark = \
            rank, hit, max_chars, lines, mark

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from ..model import MemoryType  # loaded already: there is a hit

        h, m = self.hit, self.hit.memory
        head = Text.assemble((f"{self.rank:>2}. ", "bold"), (f"{h.score:.3f}", "bold cyan"),
                             "  ", (m.memory_type.value, "magenta"), "  ", m.memory_id)
        if self.mark and self.mark.label:
            head.append(f"  {self.mark.label}")
        if self.mark and self.mark.style:
            head.stylize(self.mark.style)
        yield head
        text = f"Q: {m.question}  A: {m.answer}" if m.memory_type is MemoryType.QA \
            and m.question else m.content
        yield Indented(Text(clip(text, self.max_chars)), len(INDENT), self.lines)
        if h.scores.conflict:  # the read side's mark: served, but likely no longer true
            yield Indented(Text(h.scores.conflict, style="yellow"), len(INDENT))
        scores = _components(h)
        via = f"via {'+'.join(h.channels)}" if h.channels else ""
        if via and cell_len(f"{INDENT}{scores}  {via}") <= options.max_width:
            scores, via = f"{scores}  {via}", ""
        for line in (scores, via):
            if line:
                yield Indented(Text(line, style="dim"), len(INDENT))


class Indented:
    """``text`` wrapped to the width left after ``indent`` columns, each line indented, at
    most ``lines`` lines (the last one then ends with an ellipsis). ``first`` (say a field's
    name) fills the first line's indent: a hanging indent. Unlike rich's Padding and Table,
    no line is padded with spaces after its text."""

    def __init__(self, text: Text, indent: int, lines: int | None = None,
                 first: Text | None = None) -> None:
        self.text, self.indent, self.lines, self.first = text, indent, lines, first

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width - self.indent, 10)
        wrapped = list(self.text.wrap(console, width)) or [Text()]
        if self.lines is not None and len(wrapped) > self.lines:
            wrapped = wrapped[: self.lines]
            wrapped[-1].truncate(width - 1)
            wrapped[-1].rstrip()
            wrapped[-1].append("…")
        for i, line in enumerate(wrapped):
            line.rstrip()
            if i == 0 and self.first is not None:
                lead = self.first.copy()
                lead.pad_right(max(self.indent - lead.cell_len, 1))
                yield lead + line
            else:
                yield Text(" " * self.indent) + line if line.plain else Text()


def fields(rows: Sequence[tuple[str, str]]) -> Group:
    """``name  value`` lines, the values aligned and wrapped under themselves."""
    indent = max((len(name) for name, _ in rows), default=0) + 2
    return Group(*(Indented(Text(value), indent, first=Text(name, style="bold"))
                   for name, value in rows))


# What a hit's line shows of its breakdown: the weighted components by short names, then
# whatever else of model.HIT_SCORE_KEYS the hit has that its score is made of.
_WEIGHED = {"semantic": "sem", "keyword": "kw", "tag": "tag", "recency": "rec",
            "importance": "imp", "reliability": "rel"}
_NAMES = {"time_match": "time"}
_NOT_IN_SCORE = ("ttl_weight", "evidence", "second_semantic")  # ttl shown under 1 only


def _components(h: SearchHit) -> str:
    from ..model import HIT_SCORE_KEYS

    values = h.scores.model_dump()
    parts = [f"{short}={values[k]:.2f}" for k, short in _WEIGHED.items()]
    if h.scores.ttl_weight < 1:
        parts.append(f"ttl={h.scores.ttl_weight:.2f}")
    parts += [f"{_NAMES.get(k, k)}={values[k]:.2f}" for k in HIT_SCORE_KEYS
              if k not in _WEIGHED and k not in _NOT_IN_SCORE and values[k] is not None]
    return " ".join(parts)
