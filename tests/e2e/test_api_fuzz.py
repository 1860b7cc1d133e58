"""Property-based: schemathesis generates requests from the OpenAPI schema for every operation,
valid ones and ones that break the schema, sent over real HTTP to a server on loopback with an
admin key. No response may be a server error (5xx), whatever the input. (The probe is
``varvemem.benchmarks.reliability.probe_fuzz``; bench/bench_reliability.py runs it longer.)"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from varvemem.benchmarks.reliability import probe_fuzz

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


def test_no_input_makes_a_server_error(served: tuple[str, str]) -> None:
    url, key = served
    out = probe_fuzz(url, key, examples=15)
    assert out.attempts >= 20 * 15  # both modes, over 20 operations
    assert out.ok and out.server_errors == 0, out.report()


def test_the_server_keeps_to_its_schema(served: tuple[str, str], tmp_path: Path) -> None:
    """schemathesis' own runner with every check but one on (response_schema_conformance,
    status_code_conformance, content_type_conformance, positive and negative data, undeclared
    methods' 405 and Allow, the stateful links...) over its coverage, fuzzing and stateful
    phases finds nothing. A schema-breaking body the body gate refuses first (a documented 413)
    counts as refused. Left out: use_after_free, which wants a deleted memory's history gone;
    the history outlives the memory on purpose (its ``delete`` entry is the audit trail)."""
    url, key = served
    config = tmp_path / "schemathesis.toml"
    config.write_text("[checks.negative_data_rejection]\nexpected-statuses = "
                      '[400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429, "5xx"]\n')
    out = subprocess.run(
        [sys.executable, "-c", "from schemathesis.cli import schemathesis; schemathesis()",
         "--config-file", str(config), "run", f"{url}/openapi.json", "--checks", "all",
         "--exclude-checks", "use_after_free",
         "-H", f"Authorization: Bearer {key}", "--max-examples", "10", "--seed", "0",
         "--no-color"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    report = out.stdout + out.stderr
    assert out.returncode == 0 and "Failures:" not in report, report[-20_000:]
    tested = re.search(r"Tested: (\d+)", report)
    assert tested and int(tested[1]) >= 24, report[-3000:]  # every operation
