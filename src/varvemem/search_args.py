"""The search arguments in one table: each keyword of :meth:`varvemem.Memory.search` (which
``why_not`` takes too, and ``context`` passes on), what it means, and its name on each
surface that offers it: the REST body (``POST /v1/search``, ``/v1/context``), the MCP
``search_memories`` tool and ``varvemem search``.

The REST body hands its fields to the library through this table;
``tests/unit/test_search_args.py`` checks ``Memory.search``, ``why_not``, the REST body, the
MCP tool and the CLI command against it, so a new argument is a row here plus the keyword in
``Memory.search`` and ``why_not`` (and wherever a surface should offer it: the test names it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SearchArg:
    """``name``: the library's keyword. ``rest``, ``mcp``, ``cli``: what the REST body, the
    MCP tool and the CLI command call it (None: not offered there). ``explained``:
    ``why_not`` takes it too."""

    name: str
    doc: str
    rest: str | None = None
    mcp: str | None = None
    cli: str | None = None
    explained: bool = True


SEARCH_ARGS: tuple[SearchArg, ...] = (
    SearchArg("top_k", "how many hits at most (default: retrieval.top_k)", "top_k", "top_k",
              "--top-k"),
    SearchArg("type", "only memories of these types", "types", "types", "--type"),
    SearchArg("tier", "only memories in these tiers", "tiers", None, "--tier"),
    SearchArg("tags", "only hits with one of these tags (they score too)", "tags", "tags",
              "--tags"),
    SearchArg("user", "only this user's memories", "user", "user", "--user"),
    SearchArg("agent", "only this agent's memories", "agent", None, "--agent"),
    SearchArg("session", "only this session's memories", "session", "session", "--session"),
    SearchArg("tenant", "the tenant (default: the settings'; the service: the key's)", None,
              None, "--tenant"),
    SearchArg("since", "only memories created at or after this time", "since"),
    SearchArg("until", "only memories created before this time", "until"),
    SearchArg("as_of", "what was valid (and recorded) at this time", "as_of", None, "--as-of"),
    SearchArg("include_superseded", "superseded memories too", "include_superseded", None,
              "--include-superseded"),
    SearchArg("include_archive", "the archive too (slow)", "include_archive", None,
              "--archive"),
    SearchArg("profile", "the re-ranking profile by name", "profile", None, "--profile"),
    SearchArg("min_relevance", "the least relevance a judged hit returned has",
              "min_relevance", "min_relevance", "--min-relevance"),
    SearchArg("query_vector", "the query's unit vector (skips embedding it)", explained=False),
    SearchArg("record", "False: the hits are not counted as used", explained=False),
)

REST_FIELDS: dict[str, str] = {a.rest: a.name for a in SEARCH_ARGS if a.rest}
"""The REST body's search fields, each with the library keyword it is."""
