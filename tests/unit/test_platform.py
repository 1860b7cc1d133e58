"""varvemem is POSIX only: where there is no ``fcntl`` (Windows), importing it, any of its
modules or its command line fails at once with one error that says why, not with an
ImportError deep in the stores' imports. Simulated in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import importlib, json, sys, traceback
    sys.modules["fcntl"] = None  # as on Windows: no such module
    try:
        importlib.import_module(sys.argv[1])
    except ImportError as exc:
        from varvemem.errors import VarvememError
        frames = traceback.extract_tb(exc.__traceback__)
        print(json.dumps({"type": type(exc).__name__, "message": str(exc),
                          "varvemem_error": isinstance(exc, VarvememError),
                          "raised_in": frames[-1].filename.rsplit("/", 1)[-1],
                          "varvemem_frames": [f.filename.split("/varvemem/", 1)[-1]
                                              for f in frames if "/varvemem/" in f.filename]}))
    else:
        print(json.dumps(None))
""")


def _import_without_fcntl(module: str) -> dict[str, object] | None:
    proc = subprocess.run([sys.executable, "-c", CHILD, module], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] | None = json.loads(proc.stdout)
    return result


@pytest.mark.parametrize("module", ["varvemem", "varvemem.stores.sqlite",
                                    "varvemem.stores.local_vectors", "varvemem.stores.session_log",
                                    "varvemem.api", "varvemem.cli"])
def test_without_fcntl_the_import_fails_at_once_saying_why(module: str) -> None:
    err = _import_without_fcntl(module)
    assert err is not None, f"{module} imported on a platform without fcntl"
    assert err["type"] == "UnsupportedPlatformError" and err["varvemem_error"]
    assert "needs a POSIX system" in str(err["message"]) and "fcntl" in str(err["message"])
    # Raised by the package's own check, before any store module is imported.
    assert err["raised_in"] == "_platform.py"
    assert err["varvemem_frames"] == ["__init__.py", "_platform.py"], err


def test_the_command_line_fails_with_that_error_too() -> None:
    code = "import sys; sys.modules['fcntl'] = None; sys.argv = ['varvemem', '--help']; " \
           "import runpy; runpy.run_module('varvemem', run_name='__main__')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines()[-1].startswith(
        "varvemem.errors.UnsupportedPlatformError: varvemem needs a POSIX system")
