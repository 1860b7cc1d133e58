"""The search arguments in one table: each keyword of :meth:`varvemem.Memory.search` (which
``why_not`` takes too, and ``context`` passes on), what it means, what its values are, and its
name on each surface that offers it: the REST body (``POST /v1/search``, ``/v1/context``), the
MCP ``search_memories`` tool and ``varvemem search``.

Each surface declares the rows that name it: the type from the row's :data:`Kind` (each
surface spells a kind its own way: the REST body's patterns, the CLI's comma-separated lists),
the bounds, the default and the description (``doc``). A new argument is a row here plus the
keyword in ``Memory.search`` and ``why_not``; ``tests/unit/test_search_args.py`` checks the
library and the surfaces against the table.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

TOP_K_MAX = 1000
"""The most hits one search may ask for (``top_k``): the library and every surface refuse
more."""

Kind = Literal["count", "number", "flag", "time", "name", "session", "profile", "types",
               "tiers", "tags", "vector"]
"""What an argument's values are: a whole number, a number, true or false, a date and time, a
user's, agent's or tenant's name, a session id, a retrieval profile's name, a list of memory
types, of tiers or of tags, a unit vector."""

_F = TypeVar("_F", bound=Callable[..., Any])

LISTS: frozenset[Kind] = frozenset({"types", "tiers", "tags"})
"""The kinds whose value is a list."""


@dataclass(frozen=True)
class SearchArg:
    """``name``: the library's keyword; ``doc``: what it does, as every surface describes it;
    ``kind``, ``default``, and ``low`` and ``high`` (inclusive bounds of a number). ``rest``,
    ``mcp``, ``cli``: what the REST body, the MCP tool and the CLI command call it (None: not
    offered there); ``cli_short``: the CLI option's short form. ``explained``: ``why_not``
    takes it too."""

    name: str
    doc: str
    kind: Kind
    default: bool | None = None
    low: float | None = None
    high: float | None = None
    rest: str | None = None
    mcp: str | None = None
    cli: str | None = None
    cli_short: str | None = None
    explained: bool = True


SEARCH_ARGS: tuple[SearchArg, ...] = (
    SearchArg("top_k", "How many hits at most (default: the settings' retrieval.top_k).",
              "count", low=1, high=TOP_K_MAX, rest="top_k", mcp="top_k", cli="--top-k",
              cli_short="-k"),
    SearchArg("type", "Only memories of these types.", "types", rest="types", mcp="types",
              cli="--type", cli_short="-t"),
    SearchArg("tier", "Only memories in these tiers.", "tiers", rest="tiers", cli="--tier"),
    SearchArg("tags", "Only memories carrying at least one of these tags (they also raise the "
              "score).", "tags", rest="tags", mcp="tags", cli="--tags"),
    SearchArg("user", "Only this user's memories.", "name", rest="user", mcp="user",
              cli="--user"),
    SearchArg("agent", "Only this agent's memories.", "name", rest="agent", cli="--agent"),
    SearchArg("session", "Only this session's memories.", "session", rest="session",
              mcp="session", cli="--session"),
    SearchArg("tenant", "The tenant searched (default: the settings' default_tenant).", "name",
              cli="--tenant"),
    SearchArg("since", "Only memories created at or after this time.", "time", rest="since"),
    SearchArg("until", "Only memories created before this time.", "time", rest="until"),
    SearchArg("as_of", "Read the memories as they were at this time: what was valid, and "
              "recorded, then.", "time", rest="as_of", cli="--as-of"),
    SearchArg("include_superseded", "Superseded memories too.", "flag", default=False,
              rest="include_superseded", cli="--include-superseded"),
    SearchArg("include_archive", "Search the archive too (every archived memory: slow).",
              "flag", default=False, rest="include_archive", cli="--archive"),
    SearchArg("profile", "The re-ranking profile, by name (default: the settings' "
              "retrieval.default_profile).", "profile", rest="profile", cli="--profile"),
    SearchArg("min_relevance", "The least relevance (0..1) a judged hit returned has: how "
              "likely it answers the query (default: the settings' retrieval.min_relevance; 0 "
              "drops nothing).", "number", low=0.0, high=1.0, rest="min_relevance",
              mcp="min_relevance", cli="--min-relevance"),
    SearchArg("query_vector", "The query's unit vector, from the store's model (skips "
              "embedding the query).", "vector", explained=False),
    SearchArg("record", "False: the hits are not counted as used.", "flag", default=True,
              explained=False),
)

REST_FIELDS: dict[str, str] = {a.rest: a.name for a in SEARCH_ARGS if a.rest}
"""The REST body's search fields, each with the library keyword it is."""


def with_parameters(fn: _F, parameters: Iterable[inspect.Parameter]) -> _F:
    """``fn``, which takes the search arguments as ``**kwargs``, showing ``parameters`` (keyword
    only) in their place, after its positional parameters: what :func:`inspect.signature`
    gives, which the MCP SDK and typer read to declare a tool's arguments and a command's
    options."""
    sig = inspect.signature(fn, eval_str=True)
    own = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
    at = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in own)
    fn.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[*own[:at], *parameters, *own[at:]])
    return fn
