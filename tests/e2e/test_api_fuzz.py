"""Property-based: schemathesis generates requests from the OpenAPI schema for every operation,
valid ones and ones that break the schema, sent over real HTTP to a server on loopback with an
admin key. No response may be a server error (5xx), whatever the input."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import schemathesis
from schemathesis.generation.modes import GenerationMode

from .test_server import start_server


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[tuple[str, str]]:
    home: Path = tmp_path_factory.mktemp("fuzz") / "home"
    server, thread, url, mem = start_server(home, embedder)
    key = mem.keys.create("acme", "admin")[1]
    mem.add("The staging cluster is eks-stg-2", tenant="acme", session="s-1")
    yield url, key
    server.should_exit = True
    thread.join(30)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_input_makes_a_server_error(served: tuple[str, str], mode: GenerationMode) -> None:
    url, key = served
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) >= 20
    fuzzed = 0
    for op in operations:
        @hypothesis.settings(max_examples=15, deadline=None, derandomize=True, database=None,
                             suppress_health_check=list(hypothesis.HealthCheck))
        @hypothesis.given(case=op.as_strategy(mode))
        def check(case: Any) -> None:
            resp = case.call(base_url=url, headers={"Authorization": f"Bearer {key}"})
            assert resp.status_code < 500, (
                f"{case.method} {case.formatted_path} -> {resp.status_code}: {resp.text[:300]}")
            if resp.status_code >= 400:
                assert resp.json()["error"]["message"]

        try:
            check()
        except hypothesis.errors.Unsatisfiable:
            # An operation with no input (GET /healthz) has no schema-breaking variant.
            assert mode is GenerationMode.NEGATIVE
            continue
        fuzzed += 1
    assert fuzzed >= 15
