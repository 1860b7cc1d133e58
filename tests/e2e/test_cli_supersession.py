"""A fact replaced through the command line: the new memory keeps the old one's tags, each
history names the other, and their validities meet without a gap or an overlap."""

from __future__ import annotations

import json
from pathlib import Path

from .test_cli import run


def test_a_replaced_fact_through_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    old = run(home, "add", "The release train leaves every second Thursday", "--tags",
              "release", "--now", "2026-02-01T09:00:00Z").stdout.strip()
    new = run(home, "add", "The release train now leaves every Wednesday",
              "--now", "2026-02-10T09:00:00Z").stdout.strip()
    got_old = json.loads(run(home, "get", old, "--json").stdout)
    got_new = json.loads(run(home, "get", new, "--json").stdout)
    assert got_old["superseded_by"] == new
    assert got_old["valid_to"] == got_new["valid_from"]
    assert "release" in got_new["tags"]

    tagged = json.loads(run(home, "search", "when does the release train leave?", "--tags",
                            "release", "--json").stdout)["hits"]
    assert [h["memory_id"] for h in tagged] == [new]
    assert new in run(home, "history", old).stdout
    assert old in run(home, "history", new).stdout

    # either side of the change, exactly one of the two was true
    for when, want in (("2026-02-10T08:59:59Z", old), ("2026-02-10T09:00:00Z", new)):
        hits = json.loads(run(home, "search", "release train", "--as-of", when,
                              "--json").stdout)["hits"]
        assert {h["memory_id"] for h in hits} & {old, new} == {want}
