"""Split documents into self-contained chunks for knowledge memories."""

from __future__ import annotations

import re

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
