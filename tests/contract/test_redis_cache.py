"""The short-term cache on Redis: the same session windows as the store of record, shared by
processes, never stale, and nothing acknowledged lost when the Redis server dies."""

from __future__ import annotations

import os
import signal
from datetime import timedelta
from pathlib import Path

import pytest
import redis

from varvemem import Memory, Settings, StorageError


def contents(mem: Memory, session: str = "s1") -> list[str]:
    return [r.content for r in mem.session_window(session)]


def make(home: Path, cache: str, prefix: str, embedder, clock, **store) -> Memory:
    return Memory(settings=Settings.load(home=home, store={"cache_url": cache,
                                                           "redis": {"prefix": prefix}, **store}),
                  embedder=embedder, clock=clock)


def test_window_is_served_from_redis_and_kept_current(tmp_path: Path, redis_url: str,
                                                      cache_prefix: str, embedder,
                                                      clock) -> None:
    mem = make(tmp_path, redis_url, cache_prefix, embedder, clock)
    ids = []
    for i in range(3):
        clock.advance(seconds=1)
        ids.append(mem.add(f"turn {i} about the deploy", type="dialogue", session="s1",
                           user="u1").memory_id)
    clock.advance(seconds=1)
    mem.add_tool_call("kubectl", {"args": "get pods"}, "3 pods running", session="s1")
    assert contents(mem) == ["turn 0 about the deploy", "turn 1 about the deploy",
                             "turn 2 about the deploy", mem.session_window("s1")[-1].content]
    r = redis.Redis.from_url(redis_url)
    keys = sorted(k.decode() for k in r.scan_iter(f"{cache_prefix}:*"))
    assert keys == [f"{cache_prefix}:default:active:s1:{t}{suffix}"
                    for t in ("dialogue", "tool_call") for suffix in ("", ":rec")]
    assert 0 < r.ttl(keys[0]) <= 2 * 60 * mem.settings.lifecycle.session_idle_minutes
    # appended after each write, without another fill
    clock.advance(seconds=1)
    mem.add("turn 3 about the deploy", type="dialogue", session="s1", user="u1")
    assert r.zcard(keys[0]) == 4 and r.hlen(keys[1]) == 4
    assert contents(mem)[-1] == "turn 3 about the deploy"
    # an edit or a delete reaches the window: never served stale
    store_only = Memory(settings=Settings.load(home=tmp_path), embedder=embedder, clock=clock)
    mem.update(ids[0], content="turn 0, corrected")
    assert contents(mem)[0] == "turn 0, corrected"
    mem.delete(ids[1])
    assert "turn 1 about the deploy" not in contents(mem)
    clock.advance(seconds=1)
    assert contents(mem) == contents(store_only)
    store_only.close()
    # another process sees the same window; the session's end drops it
    other = make(tmp_path / "other-home", redis_url, cache_prefix, embedder, clock,
                 url=f"sqlite://{tmp_path}/varvemem.db")
    assert contents(other) == contents(mem)
    other.close()
    clock.advance(hours=1)
    mem.consolidate(["sessions"])
    assert list(r.scan_iter(f"{cache_prefix}:*")) == []
    mem.close()


def test_redis_killed_mid_session_loses_nothing(tmp_path: Path, redis_process, embedder,
                                                clock) -> None:
    url, proc = redis_process()
    mem = make(tmp_path, url, "mt", embedder, clock, connect_timeout=0.5)
    for i in range(2):
        clock.advance(seconds=1)
        mem.add(f"before the crash {i}", type="dialogue", session="s1")
    assert contents(mem) == ["before the crash 0", "before the crash 1"]
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    clock.advance(seconds=1)
    during = mem.add("while redis was down", type="dialogue", session="s1")
    assert during.status == "created"  # acknowledged: the store of record has it
    assert contents(mem) == ["before the crash 0", "before the crash 1",
                             "while redis was down"]
    redis_process()  # back, empty
    clock.advance(seconds=1)
    mem.add("after the restart", type="dialogue", session="s1")
    assert contents(mem) == ["before the crash 0", "before the crash 1",
                             "while redis was down", "after the restart"]
    mem.close()


def test_redis_paused_then_back_never_serves_stale(tmp_path: Path, redis_process, embedder,
                                                   clock) -> None:
    """Redis unreachable but keeping its data: a session written meanwhile is dropped as soon
    as Redis answers again."""
    url, proc = redis_process()
    mem = make(tmp_path, url, "mt", embedder, clock, connect_timeout=0.5)
    mid = mem.add("the on-call phone is with Ana", type="dialogue", session="s1").memory_id
    assert contents(mem) == ["the on-call phone is with Ana"]
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        mem.update(mid, content="the on-call phone is with Ben")
        assert contents(mem) == ["the on-call phone is with Ben"]  # from the store
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    assert contents(mem) == ["the on-call phone is with Ben"]
    mem.close()


def test_window_at_a_clock_set_back_shows_no_later_turn(tmp_path: Path, redis_url: str,
                                                         cache_prefix: str, embedder,
                                                         clock) -> None:
    """Redis holds a session's newest turns: at a clock behind them the store answers, and
    neither a filled window nor a fresh one shows a turn before it was said."""
    mem = make(tmp_path, redis_url, cache_prefix, embedder, clock)
    start = clock.now
    for i in range(3):
        mem.add(f"turn {i} about the rollout", type="dialogue", session="s1")
        clock.advance(minutes=10)
    assert len(contents(mem)) == 3  # the window is filled, and served from Redis
    clock.now = start + timedelta(minutes=15)
    assert contents(mem) == ["turn 0 about the rollout", "turn 1 about the rollout"]
    redis.Redis.from_url(redis_url).delete(*redis.Redis.from_url(redis_url).keys(
        f"{cache_prefix}:*"))
    assert contents(mem) == ["turn 0 about the rollout", "turn 1 about the rollout"]  # a fill
    clock.now = start + timedelta(hours=1)
    assert len(contents(mem)) == 3
    mem.close()


def test_unreachable_redis_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match=r"store\.cache_url: cannot reach Redis at "
                                           r"redis://127\.0\.0\.1:1/0"):
        Memory(settings=Settings.load(home=tmp_path, store={
            "cache_url": "redis://127.0.0.1:1/0", "connect_timeout": 0.5}))


def test_answer_cache_on_redis_is_shared_and_never_stale(tmp_path: Path, redis_url: str,
                                                         cache_prefix: str, embedder,
                                                         clock) -> None:
    """The L3 answer cache lives beside the sessions on Redis: a question one process answered
    from a validated pair is a cache hit in another, and a changed pair is never served."""
    a = make(tmp_path, redis_url, cache_prefix, embedder, clock)
    b = make(tmp_path / "b", redis_url, cache_prefix, embedder, clock,
             url=f"sqlite://{tmp_path}/varvemem.db")
    pid = a.save_qa("Which port does the API use?", "Port 8443.", 0.95)
    assert a.ask("Which port does the API use?").reason.startswith("a validated")
    r = redis.Redis.from_url(redis_url)
    [key] = [k.decode() for k in r.scan_iter(f"{cache_prefix}:default:answer:*")]
    assert 0 < r.ttl(key) <= 24 * 3600
    assert b.ask("which port does the API use?").reason.startswith("cached")
    b.qa.update(pid, answer="Port 9443 since the migration.")
    again = a.ask("Which port does the API use?")
    assert not again.reason.startswith("cached") and again.answer.startswith("Port 9443")
    a.close()
    b.close()
