"""A module skipped as a whole at import (as a missing optional package does): a probe for
tests/unit/test_suite_guards.py, never collected by the suite itself."""

import pytest

pytest.importorskip("varvemem_no_such_module", reason="probe: a module-level importorskip")


def test_probe_never_collected() -> None:
    raise AssertionError("never runs")
