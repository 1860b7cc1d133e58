"""AsyncMemory: the public API as coroutines, one worker thread per Memory."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Clock

from varvemem import AsyncMemory, Memory, Settings
from varvemem._engines import OnFirstUse
from varvemem._namespaces import QA, Inbox, shortcut
from varvemem.aio import AsyncInbox, AsyncKeys, AsyncQA, AsyncSessions, _Call
from varvemem.embeddings.usem3 import USEEmbedder
from varvemem.history import SessionHistory
from varvemem.keys import KeyRing

PAIRS = [(Memory, AsyncMemory), (QA, AsyncQA), (Inbox, AsyncInbox), (KeyRing, AsyncKeys),
         (SessionHistory, AsyncSessions)]
NAMESPACES = {"qa": AsyncQA, "inbox": AsyncInbox, "keys": AsyncKeys, "sessions": AsyncSessions}
RENAMED = {"close": "aclose", "__enter__": "__aenter__", "__exit__": "__aexit__"}


def public(cls: type) -> list[str]:
    return sorted(n for n in dir(cls) if not n.startswith("_"))


# --- no drift -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("sync", "aio"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_every_public_method_has_an_async_counterpart(sync: type, aio: type) -> None:
    missing, wrong = [], []
    for name in [*public(sync), *(["__enter__", "__exit__"] if sync is Memory else [])]:
        attr = inspect.getattr_static(sync, name)
        if isinstance(attr, OnFirstUse):  # a namespace (qa, inbox, ...): its pair checks it
            assert name in NAMESPACES, name
            continue
        if isinstance(attr, property):
            if not isinstance(inspect.getattr_static(aio, name, None), property):
                missing.append(name)
            continue
        target = RENAMED.get(name, name)
        counterpart = inspect.getattr_static(aio, target, None)
        if counterpart is None:
            missing.append(name)
            continue
        if isinstance(counterpart, _Call):  # it wraps the very method of that name
            expected = attr.method if isinstance(attr, shortcut) else attr
            if counterpart.method is not expected or counterpart.name != name:
                wrong.append(name)
        elif not inspect.iscoroutinefunction(counterpart):
            wrong.append(name)
        elif name not in RENAMED and inspect.signature(counterpart) != inspect.signature(attr):
            wrong.append(name)  # a written-out coroutine keeps the signature
    assert not missing, f"{sync.__name__} methods without an async counterpart: {missing}"
    assert not wrong, f"async counterparts that do not match {sync.__name__}: {wrong}"


def test_instance_attributes_have_counterparts(mem: Memory) -> None:
    amem = AsyncMemory(mem)
    for name in [n for n in vars(mem) if not n.startswith("_")]:
        assert hasattr(amem, name), name
    assert amem.settings is mem.settings and amem.clock is mem.clock and amem.memory is mem
    for name, wrapper in NAMESPACES.items():  # Memory builds them on first use
        assert isinstance(getattr(amem, name), wrapper), name
    assert amem.notices == mem.notices


def test_counterparts_are_coroutines_with_the_sync_docs(mem: Memory) -> None:
    amem = AsyncMemory(mem)
    assert inspect.iscoroutinefunction(amem.add) and inspect.iscoroutinefunction(amem.qa.save)
    assert amem.add.__doc__ == Memory.add.__doc__ and AsyncMemory.search.__doc__ == Memory.search.__doc__
    assert AsyncMemory.add_many.__doc__ == Memory.add_many.__doc__
    assert inspect.signature(amem.search) == inspect.signature(mem.search)


# --- behaviour ------------------------------------------------------------------------------------

FACTS = ["The staging cluster is eks-stg-2 in eu-west-1.",
         "The production cluster is eks-prd-1 in eu-central-1.",
         "Deploys are frozen on Fridays after 15:00.",
         "The on-call rotation changes every Monday at 09:00.",
         "The billing service is written in Go.",
         "The staging database is postgres 16 on db-stg-1."]
QUERIES = ["which cluster is staging?", "when are deploys frozen?", "what language is billing?"]


def script() -> list[tuple[str, str]]:
    """Adds and searches interleaved: each search sees the adds before it."""
    ops: list[tuple[str, str]] = []
    for i, fact in enumerate(FACTS):
        ops.append(("add", fact))
        if i % 2:
            ops.append(("search", QUERIES[(i // 2) % len(QUERIES)]))
    ops += [("search", q) for q in QUERIES]
    return ops


def outcome(results: list[Any]) -> list[Any]:
    out: list[Any] = []
    for r in results:
        if isinstance(r, list):
            out.append([(h.memory.content, round(h.score, 9)) for h in r])
        else:
            out.append(r.status)
    return out


def make(tmp_path: Path, name: str, embedder: USEEmbedder, clock: Clock) -> Memory:
    return Memory(settings=Settings.load(home=tmp_path / name), embedder=embedder, clock=clock)


def test_gather_gives_the_sequential_results(tmp_path: Path, embedder: USEEmbedder,
                                             clock_factory: type[Clock]) -> None:
    ops = script()
    seq = make(tmp_path, "seq", embedder, clock_factory())
    try:
        expected = outcome([seq.add(arg) if op == "add" else seq.search(arg, top_k=3)
                            for op, arg in ops])
    finally:
        seq.close()
    mem = make(tmp_path, "gather", embedder, clock_factory())
    active, threads = {"add": 0, "search": 0}, set()
    overlap: dict[str, list[int]] = {"add": [], "search": []}
    lock = threading.Lock()

    def watched(fn: Callable[..., Any], op: str) -> Callable[..., Any]:
        def run(*a: Any, **kw: Any) -> Any:
            with lock:
                active[op] += 1
                overlap[op].append(sum(active.values()))
                threads.add(threading.get_ident())
            try:
                return fn(*a, **kw)
            finally:
                with lock:
                    active[op] -= 1
        return run

    mem.add = watched(mem.add, "add")  # type: ignore[method-assign]
    mem.search = watched(mem.search, "search")  # type: ignore[method-assign]

    async def run() -> list[Any]:
        async with AsyncMemory(mem) as amem:
            return await asyncio.gather(*[amem.add(arg) if op == "add"
                                          else amem.search(arg, top_k=3) for op, arg in ops])

    got = outcome(asyncio.run(run()))
    assert got == expected
    # A write runs alone; reads beside each other (up to server.read_threads), off the loop.
    assert max(overlap["add"]) == 1 and threading.get_ident() not in threads
    assert max(overlap["search"]) <= mem.settings.server.read_threads
    assert any(got_hits for got_hits in got if isinstance(got_hits, list))


def test_cancellation_leaves_nothing_held(mem: Memory) -> None:
    release = threading.Event()
    started = threading.Event()
    log: list[str] = []

    def slow_stats(*args: Any, **kw: Any) -> int:  # a write: what comes after waits
        started.set()
        log.append("slow start")
        release.wait(10)
        log.append("slow end")
        return 0

    def never(**kw: Any) -> list[str]:
        log.append("queued ran")
        return []

    mem.close_session = slow_stats  # type: ignore[method-assign]
    mem.due_jobs = never  # type: ignore[method-assign]
    amem = AsyncMemory(mem)

    async def run() -> None:
        running = asyncio.create_task(amem.close_session("s"))
        await asyncio.to_thread(started.wait, 10)
        queued = asyncio.create_task(amem.due_jobs())
        after = asyncio.create_task(amem.tier_counts())
        await asyncio.sleep(0)
        running.cancel()
        queued.cancel()
        for task in (running, queued):
            with pytest.raises(asyncio.CancelledError):
                await task
        assert not after.done()  # behind the call still running on the worker
        log.append("cancelled")
        release.set()
        counts = await asyncio.wait_for(after, 10)
        assert isinstance(counts, dict)
        # a timeout is a cancellation too; the memory answers right after it
        release.clear()
        started.clear()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(amem.close_session("s"), 0.05)
        release.set()
        assert await asyncio.wait_for(amem.tier_counts(), 10) == counts
        await amem.aclose()

    asyncio.run(run())
    assert log == ["slow start", "cancelled", "slow end", "slow start", "slow end"]


def test_namespaces_are_coroutines_too(mem: Memory, tmp_path: Path) -> None:
    async def run() -> None:
        amem = AsyncMemory(mem)
        qid = await amem.qa.save("How do I rotate the VPN key?", "Run vpn-rotate on the bastion.",
                                 score=0.8)
        assert [h.memory.memory_id for h in await amem.qa.search("rotate the VPN key")] == [qid]
        assert [r.memory_id for r in await amem.load_all_qa()] == [qid]
        assert [h.memory.memory_id for h in await amem.search_qa("rotate the VPN key")] == [qid]
        await amem.sessions.save("s-1", [{"role": "user", "content": "hello"}])
        assert [t["content"] for t in await amem.sessions.load_session("s-1")] == ["hello"]
        key, token = await amem.keys.create("default", "read", "ci")
        assert (await amem.keys.authenticate(token)).key_id == key.key_id
        assert [k.key_id for k in await amem.keys.list()] == [key.key_id]
        assert await amem.inbox.counts() == mem.inbox.counts()
        paths = await amem.qa.export(tmp_path / "qa")
        assert len(paths) == 1
        mid = (await amem.add("The VPN bastion is vpn-1.", type="knowledge")).memory_id
        assert (await amem.get(mid)).content == "The VPN bastion is vpn-1."
        assert "vpn-1" in await amem.context("which host is the VPN bastion?")
        assert [r.status for r in await amem.add_many(["one fact", "another fact"])] == [
            "created", "created"]

    asyncio.run(run())


def test_async_with_closes_and_open_runs_off_the_loop(tmp_path: Path, embedder: USEEmbedder,
                                                      clock: Clock) -> None:
    settings = Settings.load(home=tmp_path / "home")

    async def run() -> AsyncMemory:
        loop_thread = threading.get_ident()
        amem = await AsyncMemory.open(settings=settings, embedder=embedder, clock=clock)
        async with amem:
            mid = (await amem.add("The release train leaves on Tuesdays.")).memory_id
            made_on = await amem.run(lambda m: threading.get_ident())
            assert made_on != loop_thread
            assert (await amem.run(Memory.get, mid)).content.startswith("The release train")
            assert await asyncio.to_thread(amem.run_blocking, lambda m: m.get(mid).memory_id) == mid
        await amem.aclose()  # a second close does nothing
        with pytest.raises(RuntimeError, match="closed"):
            await amem.stats()
        return amem

    asyncio.run(run())
    again = AsyncMemory(settings=settings, embedder=embedder, clock=clock)  # the data stayed
    try:
        assert again.memory.get_all()[0].content == "The release train leaves on Tuesdays."
    finally:
        again.memory.close()


def test_wrappers_of_one_memory_share_one_worker(mem: Memory) -> None:
    a, b = AsyncMemory(mem), AsyncMemory(mem)
    assert a._worker is b._worker
    with pytest.raises(TypeError):
        AsyncMemory(mem, Settings.load(home=mem.settings.home))


@pytest.mark.parametrize(("sync", "aio"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_every_call_is_a_read_or_a_write(sync: type, aio: type) -> None:
    calls = {n for n in public(aio) if isinstance(inspect.getattr_static(aio, n), _Call)
             or inspect.isfunction(inspect.getattr_static(aio, n))}
    calls -= {"aclose", "read", "read_blocking"}
    assert not aio._READS & aio._WRITES
    assert calls == aio._READS | aio._WRITES, calls ^ (aio._READS | aio._WRITES)
