"""The stored form of a memory's :class:`~.claims.Statement`.

The update engine compares each new statement with its candidates, and the read path
(:mod:`.conflicts`) compares hits with each other. Parsing a text costs about half a
millisecond, and in a big store a candidate's parse is rarely in the process's caches: so
each memory's statement is parsed once, when it is added, and stored beside it
(``Memories.statements``).

A stored statement is its key, then its JSON compressed with zlib (a third of the JSON's
bytes: its words recur in its frame, tokens and slots). The key is a hash of the text it was
parsed from, the lexicon, the ``subject_span`` and what the modules that parse do (their code
without comments or docstrings, and their word tables). A key that does not match the text
the rules read now (an edited memory, a dialogue turn read without its speaker, other
settings, other rules) makes it unusable, as does a statement stored in an older format
(JSON text): the text is parsed again. Nothing has to be migrated
when the rules or the format change.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.metadata
import json
import pkgutil
import sys
import zlib
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

from . import claims, extract
from .claims import Claim, Lexicon, Preference, Slots, Statement


def _meaning(source: str) -> str:
    """What a module's source does: its syntax tree without comments, docstrings or layout."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body[0] = ast.Pass()
    return ast.dump(tree, annotate_fields=False)


def _stemmer_version() -> str:
    try:
        return importlib.metadata.version("PyStemmer")
    except importlib.metadata.PackageNotFoundError:
        return ""


def _package(package: ModuleType) -> list[ModuleType]:
    """``package`` and each of its modules, by name: every module of the rules is read, however
    they are split."""
    names = sorted(m.name for m in pkgutil.iter_modules(package.__path__, package.__name__ + "."))
    return [package, *(importlib.import_module(name) for name in names)]


@lru_cache(maxsize=1)
def _rules() -> bytes:
    """A digest of what parses: the code (as :func:`_meaning`) and the word tables it reads.
    A word added to a table or a rule changed makes stored statements stale; a comment or a
    docstring edited does not."""
    from .._version import __version__
    from ..language import attributes, lexicon, segment, stopwords
    from ..text import analyzer

    # The syntax tree's dump differs by Python release; the stemmer is outside the tree.
    h = hashlib.sha256(f"{sys.version_info[:2]} {_stemmer_version()}".encode())
    for module in (*_package(claims), extract, analyzer, attributes, stopwords, lexicon, segment):
        try:
            h.update(_meaning(Path(module.__file__ or "").read_text("utf-8")).encode())
        except OSError:  # no source shipped: the release stands in for it
            h.update(__version__.encode())
    # The words as the rules read them: the traditional forms come from OpenCC's tables.
    h.update(repr(sorted({(r.role, r.lang): lexicon.words(r.role, r.lang)
                          for r in lexicon.LEXICON}.items())).encode())
    return h.digest()


def key(text: str, lex: Lexicon, subject_span: float) -> str:
    """What a statement parsed from ``text`` is stored under (see the module's docstring)."""
    h = hashlib.blake2b(_rules(), digest_size=9)
    h.update(lex.fingerprint)
    h.update(f"{subject_span!r}\0".encode())  # ended: span 0.5 + "1..." is not 0.51 + "..."
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _claim(c: Claim) -> list[Any]:
    return [sorted(c.frame), c.kinds, c.values, c.subject, c.words, sorted(c.tokens), c.event]


def _slots(s: Slots) -> list[Any]:
    return [sorted(s.attributes), sorted(s.subject_words), [list(v) for v in s.values],
            s.record, s.subject, s.leads, sorted(s.qualifiers)]


def dump(st: Statement, at: str) -> bytes:
    """``st`` as stored, under the key ``at``."""
    pref = st.preference
    body = json.dumps(
        [st.question, st.negated,
         None if pref is None else [sorted(pref.subject), pref.liked, pref.over],
         _claim(st.claim), _slots(st.slots), st.plain, st.values],
        ensure_ascii=False, separators=(",", ":"))
    return at.encode("ascii") + zlib.compress(body.encode("utf-8"))


def load(stored: bytes | str | None, at: str) -> Statement | None:
    """The statement ``stored`` holds if it was stored under the key ``at``, else None (also
    for an older format and for anything that does not decode: the text is then parsed
    again)."""
    key_ = at.encode("ascii")
    if not isinstance(stored, bytes) or not stored.startswith(key_):
        return None
    return _decoded(stored[len(key_):])


# A memory is a candidate of many adds and a hit of many searches: its decoded statement
# (immutable) is kept like the parses it replaces.
@lru_cache(maxsize=claims.CACHE_SIZE)
def _decoded(body: bytes) -> Statement | None:
    try:
        question, negated, pref, c, s, plain, vals = json.loads(zlib.decompress(body))
        return Statement(
            bool(question), bool(negated),
            None if pref is None else Preference(frozenset(pref[0]), pref[1], pref[2]),
            Claim(frozenset(c[0]), tuple(c[1]), tuple(c[2]), c[3], int(c[4]), frozenset(c[5]),
                  bool(c[6])),
            Slots(frozenset(s[0]), frozenset(s[1]), tuple((k, v) for k, v in s[2]),
                  bool(s[3]), s[4], tuple(s[5]), frozenset(s[6])), bool(plain), tuple(vals))
    except (ValueError, TypeError, IndexError, zlib.error):
        return None


def read(text: str, stored: bytes | str | None, lex: Lexicon, subject_span: float
         ) -> Statement:
    """The statement of ``text``: the ``stored`` one when it was parsed from this text by
    these rules, else parsed now."""
    return checked(text, stored, lex, subject_span)[0]


def checked(text: str, stored: bytes | str | None, lex: Lexicon, subject_span: float
            ) -> tuple[Statement, bytes | None]:
    """:func:`read`, and what to store in place of ``stored`` when it was unusable (None
    when it was usable): a store filled by other rules (another release) is brought up to
    date by the writes that read it."""
    at = key(text, lex, subject_span)
    found = load(stored, at)
    if found is not None:
        return found, None
    st = claims.statement(text, lex, subject_span)
    return st, dump(st, at)


def stored(text: str, lex: Lexicon, subject_span: float) -> bytes:
    """The statement of ``text`` as stored (parsed now, or found in the caches)."""
    return dump(claims.statement(text, lex, subject_span), key(text, lex, subject_span))
