"""Short ids (as git's) and reading the past (--as-of, --now) through the real command line;
bad ids are one line each, and write nothing."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from varvemem.model import HistoryEntry, MemoryRecord, MemoryType, Tier
from varvemem.stores.sqlite import SqliteStore

from .test_cli import run
from .test_cli_first_hour import one_line_error

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
TWIN_A = "mem_abc123" + "0" * 26
TWIN_B = "mem_abc123" + "f" * 26


def _twins(home: Path) -> None:
    """Two memories whose ids share their first 6 hex digits (uuid4 ids rarely do)."""
    run(home, "init")
    store = SqliteStore(home / "varvemem.db")
    try:
        with store.transaction() as tx:
            for mid in (TWIN_A, TWIN_B):
                rec = MemoryRecord(memory_id=mid, content=f"twin {mid[-1]}",
                                   memory_type=MemoryType.KNOWLEDGE, tier=Tier.LONG_TERM,
                                   created_at=T0, updated_at=T0, valid_from=T0)
                tx.insert(rec, None)
                tx.add_history(HistoryEntry(memory_id=mid, action="create", at=T0, actor="test",
                                            new=rec.model_dump(mode="json")), "default")
    finally:
        store.close()


def test_short_ids_resolve_like_git(tmp_path: Path) -> None:
    home = tmp_path / "home"
    mid = run(home, "add", "the payments team owns the PSP adapter").stdout.strip()
    for short in (mid[:10], mid[4:10], mid[4:10].upper(), mid):
        assert json.loads(run(home, "get", short, "--json").stdout)["memory_id"] == mid
    assert run(home, "history", mid[:12], "--json").stdout.count('"action"') == 1
    assert run(home, "delete", mid[4:12]).stdout == f"deleted {mid}\n"
    # a deleted memory's id still resolves, for its history
    hist = json.loads(run(home, "history", mid[4:10], "--json").stdout)
    assert [h["action"] for h in hist] == ["create", "delete"]
    line = one_line_error(run(home, "get", mid[4:10], ok=False), 1)
    assert line.startswith(f"error: memory {mid} was deleted at ")
    assert line.endswith("; its history remains")


def test_ambiguous_unknown_and_short_ids_are_one_line_and_write_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _twins(home)
    before = json.loads(run(home, "stats", "--json").stdout)
    for args in (["delete", "abc123"], ["get", "mem_abc123"], ["history", "abc123"],
                 ["restore", "abc123"], ["qa", "feedback", "abc123", "up"]):
        line = one_line_error(run(home, *args, ok=False), 1)
        typed = next(a for a in args if "abc123" in a)
        assert line == f"error: memory id {typed} is ambiguous: {TWIN_A}, {TWIN_B}"
    line = one_line_error(run(home, "delete", "fedcba98", ok=False), 1)
    assert line == "error: no memory fedcba98"
    line = one_line_error(run(home, "delete", "abc12", ok=False), 1)
    assert line == "error: memory id abc12 is too short: give at least 6 hex digits after mem_"
    assert one_line_error(run(home, "delete", "mem_nonsense", ok=False), 1) == \
        "error: no memory mem_nonsense"
    assert json.loads(run(home, "stats", "--json").stdout)["history_entries"] == \
        before["history_entries"] == 2
    assert run(home, "delete", "abc1230").stdout == f"deleted {TWIN_A}\n"
    # ids stay taken once deleted (their history answers to them): still two matches
    assert "is ambiguous" in one_line_error(run(home, "get", "abc123", ok=False), 1)
    assert json.loads(run(home, "get", "abc123f", "--json").stdout)["memory_id"] == TWIN_B


def test_reading_the_past_with_as_of_and_now(tmp_path: Path) -> None:
    home, doc = tmp_path / "home", tmp_path / "spec.md"
    doc.write_text("# Spec 3.0\n\n## PRs\n\nRun the local smoke test before a PR.\n", "utf-8")
    v3 = run(home, "ingest", str(doc), "--json", "--now", "2026-01-01T09:00:00Z")
    old = json.loads(v3.stdout)["added"][0]
    doc.write_text("# Spec 4.0\n\n## PRs\n\nSmoke tests run in CI; no local run needed.\n",
                   "utf-8")
    v4 = json.loads(run(home, "ingest", str(doc), "--json", "--now", "2026-02-01").stdout)
    new = v4["added"][0]
    pair = run(home, "qa", "add", "how do I open a PR?", "Push a branch, then open it.",
               "--score", "0.9", "--now", "2026-01-01T10:00:00Z").stdout.strip()
    run(home, "qa", "feedback", pair, "down", "--now", "2026-03-01")

    now = json.loads(run(home, "get", old, "--json").stdout)
    assert now["superseded_by"] == new and now["valid_to"] is not None
    then = json.loads(run(home, "get", old, "--json", "--as-of", "2026-01-15").stdout)
    assert then["superseded_by"] is None and then["valid_to"] is None
    assert then["content"] == now["content"]
    # --now without --as-of reads as of --now: the same past
    assert json.loads(run(home, "get", old, "--json", "--now", "2026-01-15T00:00:00").stdout
                      ) == then
    line = one_line_error(run(home, "get", new, "--as-of", "2026-01-15", ok=False), 1)
    assert line == f"error: memory {new} did not exist at 2026-01-15T00:00:00+00:00"
    assert json.loads(run(home, "get", pair, "--json", "--as-of", "2026-02-01").stdout
                      )["score"] == 0.9
    assert json.loads(run(home, "get", pair, "--json").stdout)["score"] < 0.9

    def found(*args: str) -> list[str]:
        out = json.loads(run(home, "search", "smoke test before a PR", "--json", "--type",
                             "knowledge", *args).stdout)
        return [h["memory_id"] for h in out["hits"]]

    assert found() == [new]
    assert found("--as-of", "2026-01-15") == [old]  # the newer chunk is hidden, not yet made
    assert found("--now", "2026-01-15T00:00:00Z") == [old]
    assert "local smoke test" in run(home, "context", "smoke test before a PR",
                                     "--as-of", "2026-01-15").stdout

    run(home, "delete", new, "--now", "2026-04-01")
    gone = json.loads(run(home, "get", new, "--json", "--as-of", "2026-03-01").stdout)
    assert gone["content"].endswith("no local run needed.")  # from the delete's snapshot
    line = one_line_error(run(home, "get", new, "--as-of", "2026-05-01", ok=False), 1)
    assert line.startswith(f"error: memory {new} did not exist at 2026-05-01") and \
        "(deleted at 2026-04-01" in line


def test_as_of_follows_a_memory_through_its_tiers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    turn = run(home, "add", "the flaky checkout test needed a longer timeout", "--type",
               "dialogue", "--session", "s1", "--importance", "0.3",
               "--now", "2026-01-01T09:00:00Z").stdout.strip()
    run(home, "close-session", "s1", "--now", "2026-01-01T09:10:00Z")
    run(home, "consolidate", "--now", "2026-01-09T10:00:00Z")  # forgotten: archived
    run(home, "restore", turn[:10], "--now", "2026-01-10T00:00:00Z")

    def tier(when: str) -> str:
        return json.loads(run(home, "get", turn, "--json", "--as-of", when).stdout)["tier"]

    assert [tier(t) for t in ("2026-01-01T09:05:00Z", "2026-01-05", "2026-01-09T12:00:00Z",
                              "2026-01-11")] == ["active", "short_term", "archive", "short_term"]
    past = json.loads(run(home, "get", turn, "--json", "--as-of", "2026-01-05").stdout)
    assert past["tier_since"].startswith("2026-01-01T09:10")
