"""Imports flow one way: pyproject.toml's import-linter contracts hold (the layers, and no
circle inside any package), the layers place every module and folder of the package (a new
one must be given its layer), and no module imports another's private names."""

from __future__ import annotations

import ast
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
    (layers,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return list(layers["layers"])


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


def test_no_module_imports_another_modules_private_names() -> None:
    """``from .x import _name`` reaches into ``x``: a name shared between modules is public in
    the module that owns it (a private module, ``from . import _validate``, may be imported)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (
                    node.level or (node.module or "").startswith("varvemem")):
                continue
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            if node.level == 0:
                base = PACKAGE.parent
            folder = base.joinpath(*(node.module or "").split(".")) if node.module else base
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                a_module = (folder / f"{alias.name}.py").exists() or (folder / alias.name).is_dir()
                if private and not a_module:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {alias.name}")
    assert not found
