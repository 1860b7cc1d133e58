"""Composite keys: several names (tenant, session, user...) as one key that no other names
give (the FAQ's last answer of a session, a cached answer's Redis key)."""

from __future__ import annotations

_SEP, _ESC = ".", "\\"


def composite_key(*parts: str) -> str:
    """``parts`` joined by ``.``, each ``.`` and ``\\`` inside a part escaped with ``\\``:
    distinct tuples of parts never give the same key, and parts without either character give
    the plain join (``composite_key("faq", "last", "acme", "s1") == "faq.last.acme.s1"``, so
    keys stored before escaping existed still match). :func:`split_key` inverts it."""
    if not parts:
        raise ValueError("a composite key needs at least one part")
    for p in parts:
        if not isinstance(p, str):
            raise TypeError(f"key part {p!r} is not text")
    return _SEP.join(p.replace(_ESC, _ESC * 2).replace(_SEP, _ESC + _SEP) for p in parts)


def split_key(key: str) -> tuple[str, ...]:
    """The parts :func:`composite_key` joined into ``key``."""
    parts: list[str] = []
    cur: list[str] = []
    chars = iter(key)
    for c in chars:
        if c == _ESC:
            nxt = next(chars, None)
            if nxt is None:
                raise ValueError(f"key {key!r} ends inside an escape")
            cur.append(nxt)
        elif c == _SEP:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return tuple(parts)
