"""Probes of the suite's rules (tests/conftest.py), run by tests/unit/test_suite_guards.py in a
child pytest with a chosen environment. Never collected by the suite itself: their file names
do not start with ``test_``."""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path

import pytest

from varvemem import Memory


def test_probe_exported_variables_do_not_reach_a_memory(tmp_path: Path, embedder) -> None:
    """The parent exports VARVEMEM_STORE__URL (and its short name) naming a SQLite file of
    its own: a Memory built here must not use it."""
    leaked = os.environ.get("VARVEMEM_TEST_PROBE_LEAK_FILE", "")
    assert leaked, "the parent names the file the exported store URL points at"
    assert "VARVEMEM_STORE__URL" not in os.environ and "VARVEMEM_STORE_URL" not in os.environ
    with Memory(home=tmp_path / "home", embedder=embedder) as mem:
        assert mem.settings.store.url is None and mem.settings.home == tmp_path / "home"
        mem.add("the release train leaves on Thursdays")
    assert (tmp_path / "home" / "varvemem.db").exists()
    assert not Path(leaked).exists()


def test_probe_environment_set_by_a_test_is_undone_1() -> None:
    os.environ["VARVEMEM_RETRIEVAL__TOP_K"] = "3"  # no monkeypatch: the fixture undoes it


def test_probe_environment_set_by_a_test_is_undone_2() -> None:
    assert "VARVEMEM_RETRIEVAL__TOP_K" not in os.environ


def test_probe_skip_in_the_body() -> None:
    pytest.skip("probe: a skip in the body")


@pytest.mark.skip(reason="probe: a skip mark")
def test_probe_skip_mark() -> None:
    raise AssertionError("never runs")


@pytest.mark.skipif(True, reason="probe: a skipif mark")
def test_probe_skipif_mark() -> None:
    raise AssertionError("never runs")


@pytest.fixture
def needs_something() -> None:
    pytest.skip("probe: a skip in a fixture")


def test_probe_skip_in_a_fixture(needs_something: None) -> None:
    raise AssertionError("never runs")


def test_probe_swallowed_refusal() -> None:
    """Code that treats a refused connection as 'offline, carry on': the test still fails."""
    with contextlib.suppress(OSError):
        socket.create_connection(("192.0.2.1", 80), timeout=1)  # TEST-NET-1 (RFC 5737)


def test_probe_passes() -> None:
    assert True
