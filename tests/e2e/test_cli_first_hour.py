"""A newcomer's first hour (issue 15), through the real command line: one-line errors with the
right exit code, help that shows flags as flags, the version, global options after the
command, and homes that are made only by the commands that make them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from .test_cli import run


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command line as typed: no --home added (``run`` puts one first)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "varvemem", *args], capture_output=True,
                          text=True, env=full_env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def one_line_error(proc: subprocess.CompletedProcess[str], code: int) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert not set(proc.stderr) & set("╭╰│─"), proc.stderr  # no rich box
    return lines[0]


@pytest.mark.parametrize("args,expected", [
    (["search", "--jsn"], "error: varvemem search: No such option: --jsn"),
    (["search"], "error: varvemem search: Missing argument"),
    (["search", "x", "--top-k", "abc"], "Invalid value for '--top-k'"),
    (["search", "x", "--top-k", "0"], "Invalid value for '--top-k'"),
    (["context", "x", "--max-tokens", "3"], "Invalid value for '--max-tokens'"),
    (["add", "x", "--importance", "2"], "Invalid value for '--importance'"),
    (["search", "x", "--as-of", "9999-12-31T23:59:59-05:00"], "outside the years 1900-9000"),
    (["search", "x", "--as-of", "yesterday"], "'yesterday' is not an ISO 8601 date or time"),
    (["context", "x", "--as-of", "31/01/2026"], "Invalid value for '--as-of'"),
    (["get", "mem_0a1b2c", "--as-of", "soon"], "Invalid value for '--as-of'"),
    (["get", "mem_0a1b2c", "--now", "noon"], "Invalid value for '--now'"),
    (["serch", "x"], "error: varvemem: No such command 'serch'. Did you mean 'search'"),
    (["qa", "list", "--bogus"], "error: varvemem qa list: No such option: --bogus"),
])
def test_usage_errors_are_one_line_with_exit_2(tmp_path: Path, args: list[str],
                                               expected: str) -> None:
    home = tmp_path / "home"
    line = one_line_error(run(home, *args, ok=False), 2)
    assert expected in line
    assert line.endswith("--help')")  # where to look next
    assert not home.exists()  # refused before anything was opened


def test_help_exits_0_and_shows_flags_as_flags(tmp_path: Path) -> None:
    root = cli("--help", env={"COLUMNS": "80"})
    assert root.returncode == 0 and "<bool>" not in root.stdout
    assert "Only init, add, ingest, qa add, qa import, keys create and db upgrade create a home" \
        in \
        " ".join(root.stdout.replace("│", " ").split())
    for args in (["search", "--help"], ["qa", "list", "--help"], ["worker", "--help"]):
        out = cli(*args, env={"COLUMNS": "120"})
        assert out.returncode == 0, out.stderr
        assert "<bool>" not in out.stdout
        flags = [line for line in out.stdout.splitlines() if "--json" in line or "--once" in line]
        assert flags and all("<" not in line for line in flags)
        assert "--home" in out.stdout and "--config" in out.stdout  # global options, here too
    assert "<time>" in cli("search", "--help", env={"COLUMNS": "120"}).stdout
    assert not (tmp_path / "home").exists()


def test_version() -> None:
    expected = f"varvemem {version('varvemem')}\n"
    for args in (["--version"], ["version"]):
        proc = cli(*args)
        assert proc.returncode == 0 and proc.stdout == expected


def test_global_options_after_the_command(tmp_path: Path) -> None:
    home, other = tmp_path / "home", tmp_path / "other"
    mid = cli("add", "the staging cluster is eks-stg-2", "--home", str(home)).stdout.strip()
    assert mid.startswith("mem_") and (home / "varvemem.db").is_file()
    hits = json.loads(cli("search", "staging cluster", "--json", "--home", str(home)).stdout)
    assert [h["memory_id"] for h in hits["hits"]] == [mid]
    # after the command wins over before it, and over the environment
    cli("init", "--home", str(other))
    hits = json.loads(cli("--home", str(other), "search", "staging cluster", "--json",
                          "--home", str(home), env={"VARVEMEM_HOME": str(other)}).stdout)
    assert [h["memory_id"] for h in hits["hits"]] == [mid]
    pid = cli("qa", "add", "where is staging?", "eks-stg-2", "--home", str(home)).stdout.strip()
    listed = json.loads(cli("qa", "list", "--json", "--home", str(home)).stdout)
    assert [p["id"] for p in listed] == [pid]
    assert json.loads(cli("qa", "--home", str(home), "list", "--json").stdout) == listed
    config = tmp_path / "varvemem.toml"
    config.write_text("[retrieval]\ntop_k = 3\n", "utf-8")
    shown = json.loads(cli("config", "show", "--json", "--config", str(config)).stdout)
    assert shown["retrieval"]["top_k"] == 3


# Every command that opens a home but does not make one, with arguments that would run it.
REFUSING = [
    ["search", "x"], ["context", "x"], ["get", "mem_0a1b2c"], ["history", "mem_0a1b2c"],
    ["delete", "mem_0a1b2c"], ["stats"], ["reindex"], ["consolidate"], ["worker", "--once"],
    ["restore", "mem_0a1b2c"], ["close-session", "s1"], ["ask", "how do I deploy?"],
    ["serve", "--port", "0"], ["mcp"], ["qa", "list"], ["qa", "search", "q"],
    ["qa", "export", "out"], ["qa", "feedback", "mem_0a1b2c", "up"], ["keys", "list"],
    ["keys", "revoke", "k1"], ["inbox", "list"], ["inbox", "retry"],
]


@pytest.mark.parametrize("args", REFUSING, ids=" ".join)
def test_a_missing_home_is_refused_and_nothing_is_made(tmp_path: Path, args: list[str]) -> None:
    home = tmp_path / "mistyped"
    line = one_line_error(run(home, *args, ok=False), 1)
    assert line == f"error: home {home} does not exist; create it with " \
                   f"'varvemem init --home {home}'"
    assert list(tmp_path.iterdir()) == []  # neither the home nor anything beside it


@pytest.mark.parametrize("args", REFUSING[:6], ids=" ".join)
def test_a_folder_without_a_store_is_no_home(tmp_path: Path, args: list[str]) -> None:
    """``--home .`` or a mistyped --home that happens to exist: refused, left as it was."""
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine", "utf-8")
    line = one_line_error(run(folder, *args, ok=False), 1)
    assert line.startswith(f"error: {folder} is not a varvemem home (it holds no store)")
    assert [f.name for f in folder.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("args", [
    ["add", "x"], ["ingest", "DOC"], ["qa", "add", "q?", "a"], ["qa", "import", "FOLDER"],
    ["keys", "create", "--tenant", "acme"], ["db", "upgrade"],
], ids=" ".join)
def test_the_creating_commands_make_the_home(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "doc.md").write_text("# Doc\n\nSome text.\n", "utf-8")
    (tmp_path / "qa").mkdir()
    home = tmp_path / "home"
    paths = {"DOC": str(tmp_path / "doc.md"), "FOLDER": str(tmp_path / "qa")}
    run(home, *(paths.get(a, a) for a in args))
    assert (home / "varvemem.db").is_file()


def test_init_makes_the_home_once_and_config_show_needs_none(tmp_path: Path) -> None:
    home = tmp_path / "deep" / "home"
    assert run(home, "config", "show").returncode == 0
    assert not (tmp_path / "deep").exists()
    first = run(home, "init")
    assert first.stdout == f"{home}\n" and (home / "varvemem.db").is_file()
    mid = run(home, "add", "kept across init").stdout.strip()
    assert run(home, "init").stdout == first.stdout  # idempotent: the data stays
    assert json.loads(run(home, "get", mid, "--json").stdout)["content"] == "kept across init"
    # the default home is ~/.varvemem
    cli("init", env={"HOME": str(tmp_path)})
    assert (tmp_path / ".varvemem" / "varvemem.db").is_file()
