"""Erasure by provenance (issue 18) on every backend: after ``delete_user`` a scan of every
table, file, cache key and object finds none of the user's words, while what others said
stays, and an experience built from both users is made again from the other user's memories."""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests._llm import Call, ChatServer
from tests.contract.conftest import COMBOS

from varvemem import Memory, MemoryType, Settings

WORD = "quokka"  # in everything Ann says, and in nothing anyone else says
SECRET = "gh-erasure-secret"
ANN = ["The checkout of payment-svc times out with 504 at the gateway, the quokka squad saw it",
       "Fixed it: the quokka squad raised the gateway pool of payment-svc to 200, checkout works"]
BOB = ["payment-svc checkout gives 504 gateway timeouts during peak",
       "The fix was raising the payment-svc gateway pool to 200; checkout recovered"]
QUESTION = "Where are the quokka photos kept?"


def _answer(call: Call) -> str:
    return "From memory: " + call.fields["context"].replace("\n", " ")  # quotes every source


def _webhook(mem: Memory, cid: int, text: str) -> None:
    body = json.dumps({
        "action": "created", "repository": {"full_name": "o/r"},
        "issue": {"number": 7, "title": "Checkout timeouts", "html_url": "https://x/o/r/7"},
        "comment": {"id": cid, "body": text, "user": {"login": "ann"},
                    "html_url": f"https://x/o/r/7#c{cid}", "created_at": "2026-01-01T10:00:00Z"},
    }).encode()
    sig = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    mem.inbox.receive("ann-gh", body, {"X-Hub-Signature-256": f"sha256={sig}",
                                       "X-GitHub-Event": "issue_comment",
                                       "X-GitHub-Delivery": f"d-{cid}"})


def _residues(home: Path, settings: dict[str, Any], word: str) -> list[str]:
    """Every place outside the embedded store's own pages that holds ``word`` (any case)."""
    found: list[str] = []
    needle = word.lower()

    def look(where: str, value: object) -> None:
        if isinstance(value, bytes | bytearray):
            blob = bytes(value)
            if blob[:2] == b"\x1f\x8b":
                blob = gzip.decompress(blob)
            hit = needle.encode() in blob.lower()
        else:
            hit = needle in str(value).lower()
        if hit:
            found.append(where)

    db = home / "varvemem.db"
    if db.exists():  # every table, virtual and FTS5 shadow tables included
        conn = sqlite3.connect(db)
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            for row in conn.execute(f'SELECT * FROM "{name}"'):
                for value in row:
                    look(f"sqlite table {name}", value)
        conn.close()
    for path in sorted(home.rglob("*")):
        if path.is_file() and not path.name.startswith("varvemem.db"):
            look(f"file {path.relative_to(home)}", path.read_bytes())
    store = settings.get("store", {})
    if "url" in store:
        import psycopg

        with psycopg.connect(store["url"]) as conn:
            schema = store["postgresql"]["schema"]
            for (table,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s",
                                         (schema,)).fetchall():
                for (text,) in conn.execute(f'SELECT t::text FROM "{schema}"."{table}" t'):
                    look(f"postgres table {table}", text)
    if "cache_url" in store:
        import redis

        r = redis.Redis.from_url(store["cache_url"])
        for key in r.scan_iter(match=f"{store['redis']['prefix']}*"):
            look(f"redis key {key!r}", key)
            read = {"string": r.get, "list": lambda k: r.lrange(k, 0, -1), "hash": r.hgetall,
                    "zset": lambda k: r.zrange(k, 0, -1), "set": r.smembers}
            look(f"redis value of {key!r}", read[r.type(key).decode()](key))
    if "archive" in settings:
        import boto3

        arch = settings["archive"]
        s3 = boto3.client("s3", endpoint_url=arch["endpoint_url"], aws_access_key_id="test",
                          aws_secret_access_key="test", region_name="us-east-1")
        bucket = arch["url"].split("/")[2]
        for obj in s3.list_objects_v2(Bucket=bucket).get("Contents", []):
            look(f"s3 object {obj['Key']}", s3.get_object(Bucket=bucket,
                                                          Key=obj["Key"])["Body"].read())
    if str(store.get("vector_url", "")).startswith("milvus"):
        from pymilvus import MilvusClient

        from varvemem.stores.milvus import milvus_uri

        client = MilvusClient(milvus_uri(store["vector_url"]))
        for name in client.list_collections():
            for row in client.query(name, filter="", output_fields=["*"], limit=10_000):
                look(f"milvus {name}", {k: v for k, v in row.items() if k != "vector"})
        client.close()
    return found


@pytest.mark.parametrize("combo_settings", COMBOS, indirect=True)
def test_nothing_of_an_erased_user_is_left_anywhere(combo_settings, tmp_path: Path, embedder,
                                                   clock) -> None:
    home = tmp_path / "home"
    settings = Settings.load(
        home=home, llm={"steps": []}, faq={"reuse_min_score": 0.5},
        lifecycle={"abstract_across_users": True},
        webhooks={"sources": {"ann-gh": {"kind": "github", "tenant": "default", "secret": SECRET,
                                     "user": "ann"}}},
        **combo_settings)
    server = ChatServer(answer=_answer)
    mem = Memory(settings=settings, embedder=embedder, clock=clock, llm=server.client())
    try:
        # An early session of Ann's, archived by now.
        mem.add("the quokka plushie went to the staging office", type="dialogue", user="ann",
                session="ann-early", importance=0.2)
        clock.advance(days=1)
        mem.consolidate()
        clock.advance(days=8)
        mem.consolidate()
        assert mem.stats()["archived"] == 1
        fact = mem.add("Ann keeps the quokka photos in bucket s3://team-pics", user="ann",
                       type="knowledge").memory_id
        for user, turns in (("ann", ANN), ("bob", BOB)):
            for text in turns:
                clock.advance(minutes=1)
                mem.add(text, type="dialogue", importance=0.8, user=user, session=f"s-{user}")
            mem.sessions.save(f"s-{user}", [{"role": "user", "content": turns[0]}])
        _webhook(mem, 1, "The quokka squad confirms the checkout fix")
        assert mem.inbox.process().done == 1
        _webhook(mem, 2, "A second quokka note, not processed yet")
        # A Q&A pair answered from Ann's memories (no user: the tenant's), validated and cached.
        asked = mem.ask(QUESTION)
        pair = asked.matched["id"]
        assert fact in mem.get(pair).metadata["sources"] and WORD in mem.get(pair).content
        mem.qa.update(pair, score=0.95)
        assert mem.ask(QUESTION, user="bob").route == "reuse"
        mem.ask("what did the squad fix?", session="shared", user="ann")
        mem.sessions.save("shared", [{"role": "user", "content": "bob was here"}], user="bob")
        clock.advance(hours=2)
        job = next(j for j in mem.consolidate().jobs if j.name == "abstract")
        mixed = [e for e in (mem.get(i) for i in job.created) if e.metadata["users"] ==
                 ["ann", "bob"]]
        assert mixed and WORD in mixed[0].content, [mem.get(i).content for i in job.created]
        assert _residues(home, combo_settings, WORD)  # the scan sees what is there

        report = mem.delete_user("ann")

        left = _residues(home, combo_settings, WORD)
        assert left == [], left
        assert report.live >= 5 and report.archived == 1 and report.derived >= 2, report
        assert report.rederived == 1 and report.inbox == 2 and report.session_files == 1, report
        assert report.session_turns == 2 and report.cached_answers >= 1, report
        # Bob's side is whole: his turns, the experience made again from them, his file turn.
        remade = [r for r in mem.get_all(types=["experience"])]
        assert len(remade) == 1 and remade[0].metadata["users"] == ["bob"], remade
        assert set(remade[0].metadata["sources"]) == {r.memory_id for r in mem.get_all(
            user="bob", types=["dialogue"])} and remade[0].scope.user == "bob"
        assert [t["content"] for t in mem.sessions.load_session("shared")] == ["bob was here"]
        assert mem.sessions.load_session("s-ann") == [] and mem.sessions.load_session("s-bob")
        assert mem.search("payment-svc gateway pool", user="bob")
        assert not mem.search("photos bucket team-pics", include_archive=True)
        assert not [r for r in mem.get_all(types=[MemoryType.QA])]
        # The pending event cannot come back as a memory.
        assert mem.inbox.process().done == 0
        assert _residues(home, combo_settings, WORD) == []
    finally:
        mem.close()
