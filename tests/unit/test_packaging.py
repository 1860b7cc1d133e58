"""The wheel users install: built from the tree, its metadata and file list checked."""

from __future__ import annotations

import email
import importlib.util
import subprocess
import sys
import zipfile
from email.message import Message
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
# Extras that `all` leaves out on purpose: torch (gigabytes), plotting, the test tools.
NOT_IN_ALL = {"all", "dev", "st", "bench"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Message, set[str]]:
    out = tmp_path_factory.mktemp("wheel")
    if importlib.util.find_spec("hatchling") is None:  # the dev extra has it (under CI: fails)
        pytest.skip("building the wheel offline needs hatchling: pip install -e '.[dev]'")
    # The suite is offline: no build isolation (it downloads the backend), no index, no check
    # for a newer pip.
    cmd = [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
           "--no-index", "--disable-pip-version-check", "--quiet", "-w", str(out)]
    subprocess.run(cmd, check=True, timeout=300)
    (path,) = out.glob("varvemem-*.whl")
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(zf.read(meta)), names


def extras(meta: Message) -> dict[str, set[str]]:
    """Each extra's requirements as the wheel states them (the builder expands
    ``varvemem[...]`` self-references), without their markers."""
    out: dict[str, set[str]] = {name: set() for name in meta.get_all("Provides-Extra", [])}
    for line in meta.get_all("Requires-Dist", []):
        req = Requirement(line)
        for name in out:
            if req.marker is not None and req.marker.evaluate({"extra": name}):
                req.marker = None
                out[name].add(str(req))
    return out


def names(reqs: set[str]) -> set[str]:
    return {Requirement(r).name for r in reqs}


def test_the_wheel_is_typed_and_classified(wheel: tuple[Message, set[str]]) -> None:
    meta, names = wheel
    assert "varvemem/py.typed" in names and "varvemem/server/app.py" in names
    assert not [n for n in names if n.startswith("tests/")]
    classifiers = set(meta.get_all("Classifier", []))
    assert {"Development Status :: 3 - Alpha",
            "License :: OSI Approved :: Apache Software License",
            "Typing :: Typed",
            "Topic :: Scientific/Engineering :: Artificial Intelligence",
            "Topic :: Software Development :: Libraries :: Python Modules"} <= classifiers
    # POSIX only (file locks: varvemem/_platform.py), and it says so.
    assert {c for c in classifiers if c.startswith("Operating System ::")} == {
        "Operating System :: POSIX", "Operating System :: POSIX :: Linux"}
    assert meta["Requires-Python"] == ">=3.10"
    versions = sorted(c.rsplit(" ", 1)[1] for c in classifiers
                      if c.startswith("Programming Language :: Python :: 3."))
    assert versions[0] == "3.10" and len(versions) >= 4, versions
    assert "memory" in meta["Keywords"].split(",") and meta["License"] == "Apache-2.0"
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL", []))
    assert set(urls) >= {"Homepage", "Repository", "Issues", "Documentation"}
    assert all(u.startswith("https://") for u in urls.values()), urls
    assert meta["Description-Content-Type"] == "text/markdown"


def test_all_brings_every_backend_and_dev_reuses_it(wheel: tuple[Message, set[str]]) -> None:
    by_extra = extras(wheel[0])
    backends = set(by_extra) - NOT_IN_ALL
    assert backends >= {"server", "mcp", "langchain", "langgraph", "postgres", "redis", "milvus",
                        "s3", "e5"}
    # A new extra goes into `all` or into NOT_IN_ALL.
    assert by_extra["all"] == set().union(*(by_extra[b] for b in backends))
    assert "fastapi-offline" in names(by_extra["server"])
    assert "sentence-transformers" not in names(by_extra["all"])
    assert by_extra["dev"] >= by_extra["all"]
    assert names(by_extra["dev"]) >= {"schemathesis", "milvus", "moto", "pytest", "hypothesis",
                                      "ruff", "psutil"}
