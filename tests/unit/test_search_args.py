"""The search arguments are one table (search_args.SEARCH_ARGS): Memory.search and why_not
take its keywords with its defaults, and the REST body, the MCP tool and the CLI command offer
what its rows say they offer, under those names, described by their docs."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

from varvemem import Memory
from varvemem.search_args import REST_FIELDS, SEARCH_ARGS


def _keywords(method: object, *positional: str) -> set[str]:
    return set(inspect.signature(method).parameters) - {"self", *positional}  # type: ignore[arg-type]


def test_the_library_takes_every_row() -> None:
    assert _keywords(Memory.search, "query") == {a.name for a in SEARCH_ARGS}
    assert _keywords(Memory.why_not, "memory_id", "query") == {
        a.name for a in SEARCH_ARGS if a.explained}
    for method in (Memory.search, Memory.why_not):
        params = inspect.signature(method).parameters
        assert all(params[a.name].default == a.default for a in SEARCH_ARGS
                   if a.name in params), method


def test_the_rest_body_offers_its_rows() -> None:
    from varvemem.server.schemas import ContextIn, SearchIn  # the server extra

    assert set(SearchIn.model_fields) - {"query"} == {a.rest for a in SEARCH_ARGS if a.rest}
    assert all(SearchIn.model_fields[a.rest].description == a.doc for a in SEARCH_ARGS if a.rest)
    body = SearchIn(query="q", types=["knowledge"], tiers=["long_term"], top_k=3,
                    include_archive=True)
    assert body.args() == {"type": ["knowledge"], "tier": ["long_term"], "top_k": 3,
                           "include_superseded": False, "include_archive": True}
    assert set(body.args()) <= set(REST_FIELDS.values())
    assert ContextIn(query="q", max_tokens=100).args()["max_tokens"] == 100


def test_the_mcp_tool_offers_its_rows(tmp_path: Path) -> None:
    from varvemem.mcp_tools import build_server  # the mcp extra

    with Memory(home=tmp_path) as mem:
        tools = asyncio.run(build_server(mem).list_tools())
    (search,) = [t for t in tools if t.name == "search_memories"]
    properties = search.input_schema["properties"]
    assert set(properties) - {"query"} == {a.mcp for a in SEARCH_ARGS if a.mcp}
    assert all(properties[a.mcp]["description"] == a.doc for a in SEARCH_ARGS if a.mcp)


def test_the_cli_command_offers_its_rows() -> None:
    import typer.main

    from varvemem.cli import _app

    command = typer.main.get_command(_app.app).commands["search"]  # type: ignore[attr-defined]
    options = {o for p in command.params for o in p.opts if o.startswith("--")}
    assert options - {"--json", "--now"} == {a.cli for a in SEARCH_ARGS if a.cli}
    helps = {p.name: p.help or "" for p in command.params}
    assert all(helps[a.name].startswith(a.doc) for a in SEARCH_ARGS if a.cli)
