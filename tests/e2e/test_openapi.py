"""The OpenAPI schema is one generated clients accept: it validates, every operation has a
readable operationId, typed responses and the server's real error body; and a client generated
from it (openapi-python-client, offline, in a temporary directory) works against a live server:
typed results, typed enums, errors read as the typed error."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import install_tool

from varvemem.server.app import create_app
from varvemem.settings import Settings

from .test_server import start_server

PINNED = "0.29.1"  # scripts/openapi-client-tool.sh installs this version of openapi-python-client
ROOT = Path(__file__).resolve().parents[2]

ERROR = "#/components/schemas/ErrorResponse"
UNKEYED = {"/healthz", "/readyz", "/metrics", "/v1/webhooks/{source}"}


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    app = create_app(Settings.load(home=tmp_path_factory.mktemp("spec") / "home"))
    return app.openapi()


def operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec["paths"].items():
        for method, op in item.items():
            yield path, method, op


def test_the_schema_validates(spec: dict[str, Any]) -> None:
    from openapi_spec_validator import validate

    validate(spec)  # type: ignore[arg-type]
    assert "HTTPValidationError" not in spec["components"]["schemas"]  # FastAPI's, not sent


def test_operation_ids_are_the_routes_names(spec: dict[str, Any]) -> None:
    ids = [op["operationId"] for _, _, op in operations(spec)]
    assert len(ids) == len(set(ids))
    assert {"add_memory", "get_memory", "search", "memory_history", "receive"} <= set(ids)
    assert all(i.isidentifier() and "__" not in i for i in ids), ids


def test_responses_are_typed_and_errors_are_the_real_body(spec: dict[str, Any]) -> None:
    for path, method, op in operations(spec):
        where = f"{method.upper()} {path}"
        for status, resp in op["responses"].items():
            content = resp.get("content", {})
            if status == "204" or path in ("/readyz", "/metrics"):
                continue
            schema = content["application/json"]["schema"]
            if status.startswith("2"):
                assert "$ref" in schema, f"{where} {status}: untyped"
            else:
                assert schema == {"$ref": ERROR}, f"{where} {status}"
        codes = set(op["responses"])
        if path not in UNKEYED:
            assert {"401", "403", "422", "503"} <= codes, where
        if "{memory_id}" in path:
            assert "404" in codes, where
        if method in ("post", "patch"):
            assert {"413", "415"} <= codes, where
    error = spec["components"]["schemas"]["ErrorInfo"]
    assert {"type", "message"} <= set(error["required"])
    assert "request_id" in error["properties"]


def test_fixed_sets_are_enums(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    assert set(schemas["Tier"]["enum"]) == {"active", "short_term", "mid_term", "long_term",
                                           "archive"}
    assert "qa" in schemas["MemoryType"]["enum"]
    memory_in = schemas["MemoryIn"]["properties"]
    assert {"$ref": "#/components/schemas/MemoryType"} in memory_in["type"]["anyOf"]
    assert {"$ref": "#/components/schemas/Tier"} in memory_in["tier"]["anyOf"]
    profile = schemas["SearchIn"]["properties"]["profile"]["anyOf"][0]
    assert profile["enum"] == ["default", "faq", "learned"]  # the settings' profiles
    inbox = next(op for p, m, op in operations(spec) if p == "/v1/inbox")
    status = next(p for p in inbox["parameters"] if p["name"] == "status")
    assert status["schema"]["anyOf"][0]["enum"] == ["pending", "processing", "done", "failed"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, embedder: Any
           ) -> Iterator[tuple[str, str, str]]:
    home: Path = tmp_path_factory.mktemp("client") / "home"
    server, thread, url, mem = start_server(home, embedder)
    writer = mem.keys.create("acme", "write")[1]
    reader = mem.keys.create("acme", "read")[1]
    yield url, writer, reader
    server.should_exit = True
    thread.join(30)


@pytest.fixture(scope="module")
def client_package(served: tuple[str, str, str],
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    tool = ROOT / ".cache" / "openapi-tool" / "bin" / "openapi-python-client"
    install_tool("openapi-client-tool.sh", {"OPENAPI_PYTHON_CLIENT_VERSION": PINNED}, tool,
                 f"openapi-python-client {PINNED}")
    url = served[0]
    where = tmp_path_factory.mktemp("generated")
    (where / "openapi.json").write_text(httpx.get(f"{url}/openapi.json").text)
    (where / "config.yaml").write_text("post_hooks: []\n")
    out = subprocess.run(
        [str(tool), "generate", "--path", "openapi.json",
         "--config", "config.yaml", "--meta", "none", "--output-path", "vmclient"],
        cwd=where, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Warning" not in out.stdout + out.stderr, out.stdout + out.stderr  # nothing skipped
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module("vmclient")
    finally:
        sys.path.remove(str(where))
        for name in [m for m in sys.modules if m == "vmclient" or m.startswith("vmclient.")]:
            del sys.modules[name]


def test_a_generated_client_talks_to_the_server(served: tuple[str, str, str],
                                                client_package: Any) -> None:
    url, writer, reader = served
    api = importlib.import_module("vmclient.api.memories")
    models = importlib.import_module("vmclient.models")
    add_memory = importlib.import_module("vmclient.api.memories.add_memory")
    get_memory = importlib.import_module("vmclient.api.memories.get_memory")
    memory_history = importlib.import_module("vmclient.api.memories.memory_history")
    feedback = importlib.import_module("vmclient.api.memories.feedback")
    search = importlib.import_module("vmclient.api.retrieval.search")
    assert api is not None
    client = client_package.AuthenticatedClient(base_url=url, token=writer)
    read_only = client_package.AuthenticatedClient(base_url=url, token=reader)

    added = add_memory.sync_detailed(client=client, body=models.MemoryIn(
        content="The staging cluster is eks-stg-2", type_=models.MemoryType.KNOWLEDGE,
        tags=["infra"], tier=models.Tier.LONG_TERM))
    assert added.status_code == 201
    result = added.parsed
    assert isinstance(result, models.AddResult) and result.status.value == "created"

    found = search.sync(client=read_only, body=models.SearchIn(query="which staging cluster?"))
    assert isinstance(found, models.SearchResult)
    hit = found.hits[0]
    assert hit.memory_id == result.memory_id and hit.tier is models.Tier.LONG_TERM
    assert hit.memory_type is models.MemoryType.KNOWLEDGE and hit.score > 0
    assert isinstance(hit.scores.semantic, float)

    got = get_memory.sync(memory_id=result.memory_id, client=read_only)
    assert isinstance(got, models.StoredMemory)
    assert got.content == "The staging cluster is eks-stg-2" and "infra" in got.tags
    assert got.created_at.tzinfo is not None

    history = memory_history.sync(memory_id=result.memory_id, client=read_only)
    assert isinstance(history, models.History)
    assert [e.action.value for e in history.items] == ["create"]

    # Errors arrive as the typed error body.
    missing = get_memory.sync_detailed(memory_id="mem_nope", client=read_only)
    assert missing.status_code == 404
    assert isinstance(missing.parsed, models.ErrorResponse)
    assert missing.parsed.error.type_ == "not_found" and missing.parsed.error.message
    refused = add_memory.sync_detailed(client=read_only, body=models.MemoryIn(content="x"))
    assert refused.status_code == 403 and refused.parsed.error.type_ == "forbidden"
    invalid = feedback.sync_detailed(memory_id=result.memory_id, client=client,
                                     body=models.FeedbackIn(helpful=True, weight=5.0))
    assert invalid.status_code == 422 and invalid.parsed.error.type_ == "invalid"
    anonymous = client_package.Client(base_url=url)
    unauthorized = get_memory.sync_detailed(memory_id=result.memory_id, client=anonymous)
    assert unauthorized.status_code == 401 and unauthorized.parsed.error.type_ == "unauthorized"
