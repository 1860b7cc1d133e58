"""Cross-tenant probes (issue 18) against a live server: the prober (tenant acme) reaches
nothing of the owner's (tenant globex) by id, by filters, through the other endpoints, by side
channel, or over MCP. Target: 0 leaks, 0 influence."""

from __future__ import annotations

from typing import Any

import pytest

from varvemem.benchmarks import reliability as rel

from .conftest import WEBHOOK, Live, live_server


def test_by_id_every_answer_is_that_of_an_unknown_id(live: Live) -> None:
    out = rel.probe_by_id(live.url, live.prober, live.owner)
    assert out.attempts >= 40
    assert out.ok, out.report()


def test_by_filters_nothing_of_the_owner_comes_back(live: Live) -> None:
    out = rel.probe_by_filters(live.url, live.prober, live.owner)
    assert out.attempts >= 100
    assert out.ok, out.report()


def test_sessions_users_documents_qa_inbox_and_consolidation(live: Live) -> None:
    out = rel.probe_endpoints(live.url, live.prober, live.owner, webhook=WEBHOOK)
    assert out.attempts >= 15
    assert out.ok, out.report()


def test_side_channel_the_owners_writes_move_no_score_of_the_prober(
        live_on_each_store: Live) -> None:
    """300 memories of the owner's with the prober's query words must not change the prober's
    keyword scores, ranks or counts, on either store (the full-text statistics, BM25's
    document frequencies, must be the tenant's own)."""
    live = live_on_each_store
    out = rel.probe_side_channel(live.url, live.prober, live.owner, writes=300)
    assert out.attempts >= 10
    assert out.ok, out.report()


@pytest.mark.slow  # an MCP server as a subprocess
def test_mcp_one_tenant_per_process_that_no_argument_changes(tmp_path: Any,
                                                             embedder: Any) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="needs the MCP SDK 2 (varvemem[mcp])")
    srv = live_server(tmp_path / "home", embedder)
    try:
        owner = rel.seed_owner(srv.url, srv.owner)
    finally:
        srv.stop()  # the MCP server process opens the same home
    out = rel.probe_mcp(srv.home, "acme", owner, WEBHOOK.tenant)
    assert out.attempts >= 40
    assert out.ok, out.report()
