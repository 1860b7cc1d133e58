"""Split documents into self-contained chunks for knowledge memories."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def chunk_markdown(text: str, max_chars: int = 1200) -> list[tuple[str, str]]:
    """Chunks of ``text`` as ``(heading path, chunk text)``.

    Splits at Markdown headings, then at blank lines when a section exceeds ``max_chars``; each
    chunk starts with its heading path so it reads on its own in a context. A lone top-level
    title is left out of that path, so that retitling a document (``Spec 3.0`` -> ``Spec 4.0``)
    does not make its unchanged sections look changed.
    """
    lines = text.splitlines()
    fenced = _fenced_lines(lines)
    titles = [i for i, line in enumerate(lines) if line.startswith("# ") and i not in fenced]
    if len(titles) == 1:
        del lines[titles[0]]
        fenced = _fenced_lines(lines)
    sections: list[tuple[list[str], list[str]]] = []
    stack: list[tuple[int, str]] = []  # (level, heading) of the enclosing headings
    path: list[str] = []
    body: list[str] = []
    for i, line in enumerate(lines):
        m = None if i in fenced else _HEADING.match(line)
        if m:
            if any(s.strip() for s in body):
                sections.append((list(path), body))
            level = len(m.group(1))
            stack = [(lv, h) for lv, h in stack if lv < level] + [(level, m.group(2).strip())]
            path = [h for _, h in stack]
            body = []
        else:
            body.append(line)
    if any(s.strip() for s in body):
        sections.append((list(path), body))

    chunks: list[tuple[str, str]] = []
    for heads, lines in sections:
        title = " > ".join(heads)
        prefix = f"{title}\n\n" if title else ""
        paragraphs = [p.strip() for p in "\n".join(lines).split("\n\n") if p.strip()]
        current = ""
        for para in paragraphs:
            while len(para) > max_chars:  # one huge paragraph: hard split
                if current:
                    chunks.append((title, prefix + current))
                    current = ""
                chunks.append((title, prefix + para[:max_chars]))
                para = para[max_chars:]
            if current and len(current) + len(para) + 2 > max_chars:
                chunks.append((title, prefix + current))
                current = para
            else:
                current = f"{current}\n\n{para}" if current else para
        if current:
            chunks.append((title, prefix + current))
    return chunks


def _fenced_lines(lines: list[str]) -> set[int]:
    """Indexes of lines inside ``` or ~~~ code fences (a ``#`` there is a comment)."""
    inside: set[int] = set()
    fence: str | None = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if fence is None and stripped[:3] in ("```", "~~~"):
            fence = stripped[:3]
        elif fence is not None:
            if stripped.startswith(fence):
                fence = None
            else:
                inside.add(i)
    return inside


# -- streaming --------------------------------------------------------------------------------
def iter_lines(blocks: Iterable[str]) -> Iterator[str]:
    """The lines of the text that ``blocks`` make up, as ``"".join(blocks).splitlines()``
    gives them, holding one block and one line at a time (a line ending split between two
    blocks, ``\\r`` then ``\\n``, is one ending)."""
    rest = ""
    for block in blocks:
        if not block:
            continue
        lines = (rest + block).splitlines(keepends=True)
        rest = lines.pop()  # perhaps incomplete: the next block may go on with it
        for line in lines:
            yield line.splitlines()[0]
    if rest:
        yield rest.splitlines()[0]


def count_titles(lines: Iterable[str], stop: int = 2) -> int:
    """How many top-level titles (``# ...`` outside code fences) ``lines`` have, counting up to
    ``stop`` (what :func:`iter_chunks` needs to know before it reads the text)."""
    fences = _FenceState()
    n = 0
    for line in lines:
        if not fences.inside(line) and line.startswith("# "):
            n += 1
            if n >= stop:
                break
    return n


def iter_chunks(lines: Iterable[str], max_chars: int = 1200,
                lone_title: bool = False) -> Iterator[tuple[str, str]]:
    """:func:`chunk_markdown`'s chunks of the text of ``lines`` (as ``str.splitlines`` cuts
    them), one section and one paragraph at a time. ``lone_title``: the text has exactly one
    top-level title (:func:`count_titles` is 1), left out of the heading paths."""
    fences = _FenceState()
    stack: list[tuple[int, str]] = []
    packer = _Packer("", max_chars)
    for line in lines:
        fenced = fences.inside(line)
        if lone_title and not fenced and line.startswith("# "):
            lone_title = False  # the title: dropped, as if the line were not there
            continue
        m = None if fenced else _HEADING.match(line)
        if m:
            yield from packer.close()
            level = len(m.group(1))
            stack = [(lv, h) for lv, h in stack if lv < level] + [(level, m.group(2).strip())]
            packer = _Packer(" > ".join(h for _, h in stack), max_chars)
        else:
            yield from packer.line(line)
    yield from packer.close()


class _FenceState:
    """:func:`_fenced_lines` one line at a time."""

    def __init__(self) -> None:
        self.fence: str | None = None

    def inside(self, line: str) -> bool:
        stripped = line.lstrip()
        if self.fence is None:
            if stripped[:3] in ("```", "~~~"):
                self.fence = stripped[:3]
            return False
        if stripped.startswith(self.fence):
            self.fence = None
            return False
        return True


class _Packer:
    """One section's chunks as :func:`chunk_markdown` packs them, fed a line at a time.

    A paragraph is the lines between empty ones, stripped; a paragraph longer than
    ``max_chars`` is cut into ``max_chars`` pieces as soon as they are certain, so a section
    (or a paragraph) of any size is held only a piece at a time."""

    def __init__(self, title: str, max_chars: int) -> None:
        self.title = title
        self.prefix = f"{title}\n\n" if title else ""
        self.max = max_chars
        self.current = ""
        self.para: list[str] = []  # the lines of the paragraph being read
        self.size = 0
        self.cut = False  # pieces of it were cut off already (its leading strip is done)

    def line(self, line: str) -> Iterator[tuple[str, str]]:
        if line == "":
            yield from self._paragraph()
            return
        self.para.append(line)
        self.size += len(line) + 1
        if self.size > 4 * self.max + 2:
            yield from self._early_pieces()

    def close(self) -> Iterator[tuple[str, str]]:
        yield from self._paragraph()
        if self.current:
            yield self.title, self.prefix + self.current
            self.current = ""

    def _early_pieces(self) -> Iterator[tuple[str, str]]:
        """The hard-split pieces of a long paragraph that no later line can change: those
        wholly before its last non-blank character so far."""
        text = "\n".join(self.para)
        text = text if self.cut else text.lstrip()
        sure = len(text.rstrip())
        cut = 0
        while cut + self.max < sure:
            if self.current:
                yield self.title, self.prefix + self.current
                self.current = ""
            yield self.title, self.prefix + text[cut:cut + self.max]
            cut += self.max
            self.cut = True
        self.para = [text[cut:]]
        self.size = len(self.para[0]) + 1

    def _paragraph(self) -> Iterator[tuple[str, str]]:
        para = "\n".join(self.para)
        para = para.rstrip() if self.cut else para.strip()
        self.para, self.size, self.cut = [], 0, False
        if not para:
            return
        max_chars = self.max
        while len(para) > max_chars:
            if self.current:
                yield self.title, self.prefix + self.current
                self.current = ""
            yield self.title, self.prefix + para[:max_chars]
            para = para[max_chars:]
        if self.current and len(self.current) + len(para) + 2 > max_chars:
            yield self.title, self.prefix + self.current
            self.current = para
        else:
            self.current = f"{self.current}\n\n{para}" if self.current else para


_BREAKS = (b"\n\n", b"\n", b" ")  # where a cut is best made, best first


def pieces(text: str, max_bytes: int) -> list[str]:
    """``text`` in pieces of at most ``max_bytes`` bytes of UTF-8, in order: each cut at the
    last blank line before the limit, else the last line break, else the last space (when
    that keeps at least half the piece), else between two characters. Only the whitespace
    around the cuts is dropped."""
    data = text.encode("utf-8")
    out: list[str] = []
    start = 0
    while len(data) - start > max_bytes:
        end = start + max_bytes
        cut = next((i for sep in _BREAKS
                    if (i := data.rfind(sep, start, end)) > start + max_bytes // 2), -1)
        if cut < 0:
            cut = end
            while data[cut] & 0xC0 == 0x80:  # inside a character: back to its first byte
                cut -= 1
        piece = data[start:cut].decode("utf-8").strip()
        if piece:
            out.append(piece)
        start = cut
        while start < len(data) and data[start:start + 1].isspace():
            start += 1
    rest = data[start:].decode("utf-8").strip()
    return [*out, rest] if rest else out
