"""The bad-input set (issue 18) against a live server: each malformed request a 4xx with a
JSON error (or, for inputs that may be valid, no 5xx), on a connection that stays usable, and
nothing stored. Target: 0 5xx."""

from __future__ import annotations

from varvemem.benchmarks import reliability as rel

from .conftest import MAX_BODY, WEBHOOK, Live


def test_no_bad_input_makes_a_server_error(live_on_each_store: Live) -> None:
    live = live_on_each_store
    out = rel.probe_bad_input(live.url, live.prober, max_body_bytes=MAX_BODY,
                              webhook=WEBHOOK.source)
    assert out.attempts >= 130
    assert out.ok and out.server_errors == 0, out.report()
