"""Imports flow one way: pyproject.toml's import-linter contract holds, and it places every
module and folder of the package (a new one must be given its layer)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "varvemem"


def _layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    (contract,) = config["tool"]["importlinter"]["contracts"]
    return list(contract["layers"])


def test_the_contract_places_every_module() -> None:
    placed = {name for layer in _layers() for name in re.split(r"\s*[|:]\s*", layer)}
    present = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert present == placed


def test_imports_flow_one_way() -> None:
    # In a process of its own: import-linter reconfigures logging (it disables every logger).
    run = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
         f"sys.exit(lint_imports(config_filename={str(ROOT / 'pyproject.toml')!r}, "
         "no_cache=True, no_logo=True))"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
