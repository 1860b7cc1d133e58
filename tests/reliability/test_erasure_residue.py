"""Erasure leaves nothing behind and hides nobody else's fact (issue 38), on SQLite and
PostgreSQL, for every erasure of a process: after ``delete_user`` no byte of any file of the
home (the database, its write-ahead log and index, session Markdown) holds the user's words,
no PostgreSQL tuple does (and with ``store.postgresql.erase_rewrite`` no page at all); what the user
had replaced is current again; what replaced the user's memory keeps its own tags and loses
theirs; the report's counts are exact."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from tests.conftest import Clock

from varvemem import Memory

MakeMemory = Callable[..., Memory]


def _home_bytes(home: Path, word: str) -> list[str]:
    """The files of ``home`` whose bytes hold ``word`` in any case (the database files
    included: its free pages and its write-ahead log are read as they are on disk)."""
    needle = word.lower().encode()
    return sorted(str(p.relative_to(home)) for p in home.rglob("*")
                  if p.is_file() and needle in p.read_bytes().lower())


def _pg_tuples(url: str, schema: str, word: str, pages: bool) -> list[str]:
    """The tables (TOAST included) of ``schema`` with a tuple, live or dead, holding ``word``;
    with ``pages``, any byte of any page of a table, TOAST table or index."""
    found = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        rels = conn.execute(
            "SELECT c.oid::regclass::text, c.relkind FROM pg_class c WHERE c.relkind IN "
            "('r', 't', 'i') AND c.relpersistence = 'p' AND (c.relnamespace = "
            "%s::regnamespace OR c.oid IN (SELECT reltoastrelid FROM pg_class WHERE "
            "relnamespace = %s::regnamespace) OR c.oid IN (SELECT indexrelid FROM pg_index "
            "JOIN pg_class t ON t.oid = indrelid WHERE t.relnamespace = %s::regnamespace))",
            (schema, schema, schema)).fetchall()
        for rel, kind in rels:
            blocks = conn.execute("SELECT pg_relation_size(%s::regclass) / 8192",
                                  (rel,)).fetchone()[0]
            for block in range(int(blocks)):
                if pages:
                    page = conn.execute("SELECT get_raw_page(%s, %s)", (rel, block)).fetchone()[0]
                    hit = word.lower().encode() in bytes(page).lower()
                elif kind == "i":
                    continue
                else:
                    hit = bool(conn.execute(
                        "SELECT 1 FROM heap_page_items(get_raw_page(%s, %s)) WHERE "
                        "position(%s::bytea in lower(encode(t_data, 'escape'))::bytea) > 0",
                        (rel, block, word.lower().encode())).fetchall())
                if hit:
                    found.append(rel)
                    break
    return found


@pytest.fixture(params=["sqlite", "postgresql", "postgresql-rewrite"])
def store(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "sqlite":
        return {}
    rewrite = request.param.endswith("rewrite")
    return {"url": request.getfixturevalue("pg_url"), "postgresql": {
        "schema": request.getfixturevalue("pg_schema"), "erase_rewrite": rewrite}}


def _tell(mem: Memory, clock: Clock, user: str, word: str) -> dict[str, str]:
    """What ``user`` says, every text holding ``word``: a fact, a tag, turns in a session
    shared with amy, a fact amy later replaces, and a fact that replaces one of amy's."""
    ids = {}
    ids["fact"] = mem.add(f"{word} keeps the spare server keys in locker 42", user=user,
                          tags=[f"{word}-keys"]).memory_id
    clock.advance(minutes=1)
    ids["turn"] = mem.add(f"{word} here: the staging deploy is blocked on the VPN",
                          type="dialogue", user=user, session=f"war-room-{user}").memory_id
    clock.advance(minutes=1)
    ids["amy_turn"] = mem.add("amy here: I will look at the VPN gateway", type="dialogue",
                              user="amy", session=f"war-room-{user}").memory_id
    clock.advance(minutes=1)
    ids["replaced"] = mem.add(f"The {word} badge reader opens at 07:00", user=user,
                              tags=[f"{word}-badge", "facilities"]).memory_id
    clock.advance(minutes=1)
    ids["amy_old"] = mem.add(f"The cafeteria closes at 15:00 ({user} said so)", user="amy",
                             tags=["food"]).memory_id
    clock.advance(minutes=1)
    ids["replacing"] = mem.add(f"Per {word} the cafeteria now closes at 16:00", user=user,
                               supersedes=[ids["amy_old"]]).memory_id
    clock.advance(minutes=1)
    return ids


def test_an_erased_user_leaves_no_byte_and_hides_no_fact(make_memory: MakeMemory, clock: Clock,
                                                         store: dict[str, Any]) -> None:
    mem = make_memory(store=store) if store else make_memory()
    home = mem.settings.home
    word_of = {"zed": "zedquux", "yan": "yanplix"}
    said = {user: _tell(mem, clock, user, word) for user, word in word_of.items()}
    # amy replaces what each of them said, with a tag of her own beside theirs.
    amy_new = {user: mem.add(f"The badge reader on {user}'s floor opens at 06:30 now",
                             user="amy", tags=["amy"], supersedes=[ids["replaced"]]).memory_id
               for user, ids in said.items()}
    for user in said:
        clock.advance(minutes=1)
        answer = mem.ask(f"where does {user} keep the spare server keys?",
                         session=f"ops-{user}")
        assert said[user]["fact"] in answer.sources
        # An answer listing amy's memory lists the tag it took from theirs.
        answer = mem.ask(f"when does the badge reader on {user}'s floor open?",
                         session=f"badge-{user}")
        assert amy_new[user] in answer.sources and f"{word_of[user]}-badge" in answer.answer
    assert _home_bytes(home, "zedquux") and _home_bytes(home, "yanplix")  # the scan sees it

    for user, word in word_of.items():
        ids = said[user]
        own = [r.memory_id for r in mem.get_all(user=user, include_superseded=True)]
        entries = sum(len(mem.history(i)) for i in own)
        quoting = sum(bool(set(t["sources"]) & {*own, amy_new[user]})
                      for s in mem.sessions.sessions() for t in mem.sessions.load_session(s))

        report = mem.delete_user(user)

        assert report.live == len(own) and report.history == entries, report
        assert report.session_turns == quoting, report  # the answers that quoted them
        assert _home_bytes(home, word) == []
        if store:
            pg = store["postgresql"]
            assert _pg_tuples(store["url"], pg["schema"], word, pages=pg["erase_rewrite"]) == []
        # amy's fact they had replaced is hers again, with history saying why.
        back = mem.get(ids["amy_old"])
        assert back.valid_to is None and back.superseded_by is None
        assert mem.history(ids["amy_old"])[-1].action == "restore"
        assert ids["amy_old"] in [h.memory.memory_id for h in mem.search(
            "when does the cafeteria close?", top_k=3)]
        # amy's fact that replaced theirs keeps its own tags and loses theirs.
        assert mem.get(amy_new[user]).tags == ["amy"]
        assert not mem.search("badge reader", tags=[f"{word}-badge"])
        # amy's turn after theirs no longer carries their words as its context.
        turn = mem.get(ids["amy_turn"])
        assert turn.context_before == [] and turn.context_after == []
    # Nothing names a deleted memory as its replacement.
    for r in mem.get_all(include_superseded=True, limit=1000):
        assert r.superseded_by is None or mem.get(r.superseded_by)
