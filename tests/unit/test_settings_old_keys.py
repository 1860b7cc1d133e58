"""The store's settings by backend (``store.<backend>.*``), and the old flat keys: they load
for one release, from a file, a variable or an argument, with a warning naming the new key
and the same effect; set beside their new key to another value they fail, naming both."""

from __future__ import annotations

import json
import re
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from varvemem import ConfigError, MemoryType, Settings
from varvemem.backends import CACHE_URL, STORE_URL, VECTOR_URL
from varvemem.cli import app
from varvemem.settings import StoreSettings
from varvemem.settings.old_keys import MOVED

# A value other than the default for each moved key of the store, by new key.
VALUES: dict[str, Any] = {
    "store.sqlite.synchronous": "NORMAL", "store.sqlite.page_size": 4096,
    "store.sqlite.busy_timeout_ms": 500, "store.postgresql.schema": "elsewhere",
    "store.postgresql.pool_size": 9, "store.postgresql.auto_migrate": False,
    "store.postgresql.erase_rewrite": True, "store.local.hnsw_threshold": 10,
    "store.local.exact_filter_limit": 7, "store.local.hnsw_expansion_neighbours": 32,
    "store.local.oversample": 2, "store.local.dtype": "i8",
    "store.local.graph_file_vectors": True, "store.local.flush_every": 3,
    "store.local.close_save_changes": 0, "store.milvus.token": "user:password",
    "store.milvus.collection": "elsewhere", "store.redis.prefix": "elsewhere"}
ROWS = [(row.old, row.new) for row in MOVED if row.old.startswith("store.")]


def _nested(key: str, value: Any) -> dict[str, Any]:
    """``{"a": {"b": value}}`` for ``a.b``, the store's part of a dotted key."""
    out: Any = value
    for part in reversed(key.removeprefix("store.").split(".")):
        out = {part: out}
    return out  # type: ignore[no-any-return]


def _toml(value: Any) -> str:
    return json.dumps(value)  # a bool, a number or a string: the same in TOML


def _variable(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _store(settings: Settings) -> dict[str, Any]:
    return settings.store.model_dump()


def test_every_moved_key_of_the_store_has_a_value_here() -> None:
    assert {new for _, new in ROWS} == VALUES.keys()


def test_the_sections_are_named_after_the_backends() -> None:
    names = {b.name for setting in (STORE_URL, VECTOR_URL, CACHE_URL) for b in setting.backends}
    sections = {name for name, field in StoreSettings.model_fields.items()
                if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)}
    assert sections == {"sqlite", "postgresql", "local", "milvus", "redis"} and sections <= names


@pytest.mark.parametrize("old,new", ROWS)
def test_an_old_key_loads_from_each_source_with_a_warning(tmp_path: Path, monkeypatch,
                                                          old: str, new: str) -> None:
    value, leaf = VALUES[new], old.removeprefix("store.")
    expected = _store(Settings.load(home=tmp_path, store=_nested(new, value)))
    assert expected != _store(Settings.load(home=tmp_path))
    def warning(where: str) -> str:
        return re.escape(f"{old} is now {new} ({old} in {where} is read for one more release)")

    with pytest.warns(FutureWarning, match=warning("the arguments")):
        assert _store(Settings.load(home=tmp_path, store={leaf: value})) == expected
    toml = tmp_path / "varvemem.toml"
    toml.write_text(f"[store]\n{leaf} = {_toml(value)}\n", "utf-8")
    with pytest.warns(FutureWarning, match=warning(str(toml))):
        assert _store(Settings.load(home=tmp_path)) == expected
    toml.unlink()
    monkeypatch.setenv(f"VARVEMEM_STORE__{leaf.upper()}", _variable(value))
    with pytest.warns(FutureWarning, match=warning("the VARVEMEM_* variables")):
        assert _store(Settings.load(home=tmp_path)) == expected


def test_an_old_key_reaches_the_store(tmp_path: Path) -> None:
    from varvemem.stores.backends import open_records

    with pytest.warns(FutureWarning, match=r"store\.sqlite_page_size"):
        settings = Settings.load(home=tmp_path, store={"sqlite_page_size": 4096})
    open_records(settings).close()
    with sqlite3.connect(tmp_path / "varvemem.db") as db:
        assert db.execute("PRAGMA page_size").fetchone()[0] == 4096


def test_an_old_and_a_new_key_set_differently_fail_naming_both(tmp_path: Path,
                                                               monkeypatch) -> None:
    both = r"store\.pool_size and store\.postgresql\.pool_size are both set"
    with pytest.raises(ConfigError, match=both), pytest.warns(FutureWarning):
        Settings.load(home=tmp_path, store={"pool_size": 3, "postgresql": {"pool_size": 4}})
    (tmp_path / "varvemem.toml").write_text("[store]\npool_size = 3\n[store.postgresql]\n"
                                            "pool_size = 4\n", "utf-8")
    with pytest.raises(ConfigError, match="varvemem.toml: " + both), \
            pytest.warns(FutureWarning):
        Settings.load(home=tmp_path)
    (tmp_path / "varvemem.toml").write_text("[store]\npool_size = 4\n[store.postgresql]\n"
                                            "pool_size = 4\n", "utf-8")  # the same value
    with pytest.warns(FutureWarning):
        assert Settings.load(home=tmp_path).store.postgresql.pool_size == 4
    with pytest.raises(ConfigError, match=r"update\.importance_by_type\.qa and "
                                          r"types\.qa\.importance are both set"), \
            pytest.warns(FutureWarning):
        Settings.load(home=tmp_path, update={"importance_by_type": {"qa": 0.9}},
                      types={"qa": {"importance": 0.1}})
    with pytest.warns(FutureWarning):
        same = Settings.load(home=tmp_path, update={"importance_by_type": {"qa": 0.9}},
                             types={MemoryType.QA: {"importance": 0.9}})
    assert same.types[MemoryType.QA].importance == 0.9


def test_an_old_key_keeps_its_source_s_precedence(tmp_path: Path, monkeypatch) -> None:
    """Keys move inside each source before the sources merge: a variable under its old name
    still overrides the file's new key, and the arguments override both."""
    (tmp_path / "varvemem.toml").write_text("[store.postgresql]\npool_size = 4\n", "utf-8")
    monkeypatch.setenv("VARVEMEM_STORE__POOL_SIZE", "3")
    with pytest.warns(FutureWarning, match="VARVEMEM_"):
        assert Settings.load(home=tmp_path).store.postgresql.pool_size == 3
    monkeypatch.setenv("VARVEMEM_STORE__POSTGRESQL__POOL_SIZE", "6")
    monkeypatch.delenv("VARVEMEM_STORE__POOL_SIZE")
    (tmp_path / "varvemem.toml").write_text("[store]\npool_size = 3\n", "utf-8")
    with pytest.warns(FutureWarning, match="varvemem.toml"):
        assert Settings.load(home=tmp_path).store.postgresql.pool_size == 6
    with pytest.warns(FutureWarning) as seen:
        args = Settings.load(home=tmp_path, store={"pool_size": 9})
    assert args.store.postgresql.pool_size == 9
    assert any("in the arguments" in str(w.message) for w in seen)


def test_the_new_keys_load_without_a_warning(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "varvemem.toml").write_text(
        '[store.sqlite]\nsynchronous = "NORMAL"\n[store.postgresql]\nschema = "mine"\n', "utf-8")
    monkeypatch.setenv("VARVEMEM_STORE__LOCAL__HNSW_THRESHOLD", "10")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store = Settings.load(home=tmp_path, store={"redis": {"prefix": "p"}}).store
    assert (store.sqlite.synchronous, store.postgresql.schema_name) == ("NORMAL", "mine")
    assert (store.local.hnsw_threshold, store.redis.prefix) == (10, "p")


def test_an_unknown_key_in_a_section_is_refused_naming_it(tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(ConfigError, match=r"store\.sqlite\.nonsense: Extra inputs"):
        Settings.load(home=tmp_path, store={"sqlite": {"nonsense": 1}})
    with pytest.raises(ConfigError, match=r"store\.postgresql\.schema_name: Extra inputs"):
        Settings.load(home=tmp_path, store={"postgresql": {"schema_name": "x"}})
    (tmp_path / "varvemem.toml").write_text("[store.redis]\nprefixes = 'x'\n", "utf-8")
    with pytest.raises(ConfigError, match=r"store\.redis\.prefixes: Extra inputs"):
        Settings.load(home=tmp_path)
    (tmp_path / "varvemem.toml").unlink()
    monkeypatch.setenv("VARVEMEM_STORE__LOCAL__THRESHOLD", "10")
    with pytest.raises(ConfigError, match=r"store\.local\.threshold: Extra inputs"):
        Settings.load(home=tmp_path)


def test_config_show_shows_the_sections(tmp_path: Path) -> None:
    (tmp_path / "varvemem.toml").write_text(
        '[store]\nvector_token = "user:s3cret"\nhnsw_threshold = 10\n', "utf-8")
    runner = CliRunner()
    with pytest.warns(FutureWarning):
        out = runner.invoke(app, ["--home", str(tmp_path), "config", "show"])
    assert out.exit_code == 0, out.output
    lines = set(out.stdout.splitlines())
    assert {"store.sqlite.synchronous = 'FULL'", "store.postgresql.schema = 'varvemem'",
            "store.local.hnsw_threshold = 10", "store.milvus.token = '***'",
            "store.redis.prefix = 'varvemem'", "store.hnsw_expansion_search = 1024"} <= lines
    assert "s3cret" not in out.stdout
    shown = {line.split(" = ")[0] for line in lines if line.startswith("store.")}
    assert not shown & {old for old, _ in ROWS}
    with pytest.warns(FutureWarning):
        out = runner.invoke(app, ["--home", str(tmp_path), "config", "show", "--json"])
    store = json.loads(out.stdout)["store"]
    assert store["postgresql"] == {"schema": "varvemem", "pool_size": 5, "auto_migrate": True,
                                   "erase_rewrite": False}
    assert store["milvus"]["token"] == "***" and store["local"]["hnsw_threshold"] == 10
