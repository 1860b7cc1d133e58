"""Reads of one Memory from many threads while one thread writes; AsyncMemory's read pool."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.conftest import Clock, stores_of

from varvemem import AsyncMemory, Memory, Settings
from varvemem.embeddings.usem3 import USEEmbedder

BASE = [
    "The staging cluster is eks-stg-2 in eu-west-1.",
    "The production cluster is eks-prd-1 in eu-central-1.",
    "Deploys are frozen on Fridays after 15:00.",
    "The on-call rotation changes every Monday at 09:00.",
    "The billing service is written in Go and deployed with Helm.",
    "The staging database is postgres 16 on db-stg-1.",
    "Payment CI took 38 minutes because the Gradle cache key changed on every run.",
    "订单服务的镜像拉取凭证放在 values.yaml 的 imagePullSecrets 下",
    "支付流水线的缓存键包含流水线序号，所以每次构建都没有命中缓存",
    "生产环境的数据库每天凌晨两点做一次全量备份",
    "监控告警通过企业微信机器人发送到运维群",
    "测试集群的节点规格是八核三十二G",
]
QUERIES = ["which cluster is staging?", "when are deploys frozen?", "what language is billing?",
           "why was payment CI slow?", "镜像拉取凭证在哪里", "数据库什么时候备份",
           "告警发到哪里", "测试集群的节点规格"]
IGNORED = {"retrieval_count", "last_retrieved_at"}  # the reads themselves move these


def record(mem: Memory, mid: str, tenant: str) -> dict[str, Any]:
    return mem.get(mid, tenant=tenant).model_dump(exclude=IGNORED)


def hits(mem: Memory, query: str, tenant: str) -> list[tuple[str, float]]:
    return [(h.memory.memory_id, h.score)
            for h in mem.search(query, top_k=5, tenant=tenant)]


def same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> bool:
    """The same hits in the same order, the same scores but for the float rounding of another
    path: the local index multiplies the whole matrix or the filtered rows depending on the
    share the filter keeps, which the other tenant's adds move."""
    return [m for m, _ in got] == [m for m, _ in want] and \
        all(abs(a - b) < 1e-6 for (_, a), (_, b) in zip(got, want))


def version_of(content: str) -> int:
    return int(content.split("version ", 1)[1].split(" ", 1)[0])


def test_reads_beside_a_writer_match_the_serial_answers(tmp_path: Path, embedder: USEEmbedder,
                                                        clock: Clock) -> None:
    mem = Memory(settings=Settings.load(home=tmp_path / "home"), embedder=embedder, clock=clock)
    try:
        base = [r.memory_id for r in mem.add_many(BASE, tenant="base")]
        live = [r.memory_id for r in mem.add_many(
            [f"Item {k} is at version 0 of its text, owned by team t{k}." for k in range(4)],
            tenant="live", metadata={"v": 0})]
        counted: Counter[str] = Counter()
        count_lock = threading.Lock()
        records = stores_of(mem).records
        record_retrieval = records.record_retrieval

        def counting(tenant: str, ids: Any, when: Any) -> None:
            if tenant == "base":
                with count_lock:
                    counted.update(ids)
            record_retrieval(tenant, ids, when)

        records.record_retrieval = counting  # type: ignore[method-assign]
        # The serial answers, before any write.
        want_hits = {q: hits(mem, q, "base") for q in QUERIES}
        want_context = {q: mem.context(q, tenant="base") for q in QUERIES}
        want_get = {mid: record(mem, mid, "base") for mid in base}
        want_page = [r.memory_id for r in mem.get_all(tenant="base", limit=100)]
        want_history = {mid: mem.history(mid, tenant="base") for mid in base}
        want_tiers = mem.tier_counts(tenant="base")
        assert all(want_hits.values()) and any(want_context.values())

        versions: dict[str, set[int]] = {mid: {0} for mid in live}
        errors: list[str] = []
        reads = Counter[str]()

        def reader(seed: int, stop: threading.Event) -> None:
            rnd = random.Random(seed)
            try:
                while not stop.is_set():
                    op = rnd.choice(["search", "context", "get", "live", "page", "history",
                                     "tiers", "live_search"])
                    q = rnd.choice(QUERIES)
                    if op == "search" and not same(got := hits(mem, q, "base"), want_hits[q]):
                        errors.append(f"search {q!r}: {got} != {want_hits[q]}")
                    elif op == "context" and mem.context(q, tenant="base") != want_context[q]:
                        errors.append(f"context {q!r} differs")
                    elif op == "get":
                        mid = rnd.choice(base)
                        if record(mem, mid, "base") != want_get[mid]:
                            errors.append(f"get {mid} differs")
                    elif op == "page" and [r.memory_id for r in mem.get_all(
                            tenant="base", limit=100)] != want_page:
                        errors.append("get_all differs")
                    elif op == "history":
                        mid = rnd.choice(base)
                        if mem.history(mid, tenant="base") != want_history[mid]:
                            errors.append(f"history {mid} differs")
                    elif op == "tiers" and mem.tier_counts(tenant="base") != want_tiers:
                        errors.append("tier_counts differ")
                    elif op == "live":  # old or new committed version, never a mix
                        mid = rnd.choice(live)
                        rec = mem.get(mid, tenant="live")
                        v = version_of(rec.content)
                        if v not in versions[mid] or rec.metadata.get("v") != v:
                            errors.append(f"get {mid}: version {v}, metadata {rec.metadata}")
                    elif op == "live_search":
                        for h in mem.search(q, top_k=5, tenant="live"):
                            if h.memory.memory_id in versions and \
                                    h.memory.metadata.get("v") != version_of(h.memory.content):
                                errors.append(f"hit {h.memory.memory_id} is half one version")
                    reads[op] += 1
            except Exception as exc:  # the test reports it, with the others
                errors.append(f"{op}: {type(exc).__name__}: {exc}")

        for round_ in range(3):
            stop = threading.Event()
            threads = [threading.Thread(target=reader, args=(round_ * 100 + i, stop))
                       for i in range(6)]
            for t in threads:
                t.start()
            try:
                for i in range(12):  # the one writer: adds and in-place updates
                    mem.add(f"Round {round_} note {i}: the cache node n{i} was restarted.",
                            tenant="live")
                    mid = live[i % len(live)]
                    v = max(versions[mid]) + 1
                    versions[mid].add(v)
                    mem.update(mid, content=f"Item {i % len(live)} is at version {v} of its "
                               f"text, owned by team t{v}.", metadata={"v": v}, tenant="live")
            finally:
                stop.set()
                for t in threads:
                    t.join(60)
            assert not errors, errors[:5]
        assert sum(reads.values()) > 50 and reads["search"] and reads["live"], reads
        for mid in live:  # the writer's last versions are what a read now sees
            assert version_of(mem.get(mid, tenant="live").content) == max(versions[mid])
    finally:
        mem.close()
    # Every retrieval counted once: none lost to concurrent counters.
    again = Memory(settings=Settings.load(home=tmp_path / "home"), embedder=embedder, clock=clock)
    try:
        stored = {mid: again.get(mid, tenant="base").retrieval_count for mid in base}
    finally:
        again.close()
    assert stored == {mid: counted[mid] for mid in base}


# --- reads really overlap ------------------------------------------------------------------------

def test_a_blocked_read_does_not_hold_other_reads_but_a_write_waits(mem: Memory) -> None:
    mem.add_many(BASE[:4])
    mem.search("warm up")
    release, inside = threading.Event(), threading.Event()
    index = stores_of(mem).vectors
    exact = index._exact  # type: ignore[attr-defined]

    def slow(*args: Any) -> Any:  # inside the index's search, holding its lock shared
        if threading.current_thread().name == "blocked":
            inside.set()
            assert release.wait(20)
        return exact(*args)

    index._exact = slow  # type: ignore[attr-defined]
    blocked = threading.Thread(target=lambda: mem.search("staging cluster"), name="blocked")
    blocked.start()
    try:
        assert inside.wait(20)
        # Another search, a get and a context complete while the first is stuck in the index.
        t = time.perf_counter()
        assert mem.search("deploy freeze")
        assert mem.context("which cluster is staging?")
        assert time.perf_counter() - t < 15
        # A change of the index (its catch-up after a write) waits for the read holding it.
        done = threading.Event()
        writer = threading.Thread(target=lambda: (index.remove(["mem_" + "0" * 32]),
                                                  done.set()))
        writer.start()
        assert not done.wait(0.3)  # exclusive: waits for the search still inside
        release.set()
        assert done.wait(20)
        writer.join()
    finally:
        release.set()
        blocked.join(20)


def test_async_reads_overlap_and_a_write_waits_for_them(mem: Memory) -> None:
    mem.add_many(BASE[:4])
    release, started = threading.Event(), threading.Semaphore(0)
    order: list[str] = []
    get = mem.get

    def slow_get(*args: Any, **kw: Any) -> Any:
        order.append("get start")
        started.release()
        assert release.wait(20)
        order.append("get end")
        return get(*args, **kw)

    mem.get = slow_get  # type: ignore[method-assign]
    mid = mem.get_all(limit=1)[0].memory_id

    async def run() -> None:
        amem = AsyncMemory(mem)
        first = asyncio.create_task(amem.get(mid))
        second = asyncio.create_task(amem.get(mid))
        for _ in range(2):  # both reads are inside get at once
            assert await asyncio.to_thread(started.acquire, True, 20)
        write = asyncio.create_task(amem.add("The cache TTL is 300 seconds."))
        after = asyncio.create_task(amem.search("cache TTL"))
        await asyncio.sleep(0.2)
        assert not write.done() and not after.done()  # the write waits for the reads
        order.append("release")
        release.set()
        await asyncio.gather(first, second)
        res = await write
        hits = await after  # submitted after the write: it sees it
        order.append("write done")
        assert res.memory_id in [h.memory.memory_id for h in hits]
        await amem.aclose()

    asyncio.run(run())
    assert order[:3] == ["get start", "get start", "release"]


def test_gather_of_mixed_reads_and_writes_is_the_sequence(tmp_path: Path,
                                                          embedder: USEEmbedder,
                                                          clock_factory: type[Clock]) -> None:
    def opened(name: str) -> tuple[Memory, list[str]]:
        mem = Memory(settings=Settings.load(home=tmp_path / name), embedder=embedder,
                     clock=clock_factory())
        return mem, [r.memory_id for r in mem.add_many(BASE[:6])]

    ops: list[tuple[str, Any]] = []
    for i, q in enumerate(QUERIES):
        ops += [("search", q), ("add", BASE[6 + i % 6]), ("get", i % 6), ("context", q),
                ("update", (i % 6, f"Item {i} moved to version {i} of the runbook.")),
                ("get", i % 6), ("page", None), ("history", i % 6), ("search", q)]

    def sync_call(mem: Memory, ids: list[str], op: str, arg: Any) -> Any:
        if op == "search":
            return [(h.memory.content, round(h.score, 9)) for h in mem.search(arg, top_k=3)]
        if op == "add":
            return mem.add(arg).status
        if op == "get":
            return mem.get(ids[arg]).content
        if op == "context":
            return mem.context(arg)
        if op == "update":
            return mem.update(ids[arg[0]], content=arg[1]).content
        if op == "page":
            return sorted(r.content for r in mem.get_all(limit=100))
        return [e.action for e in mem.history(ids[arg])]

    seq, seq_ids = opened("seq")
    try:
        expected = [sync_call(seq, seq_ids, op, arg) for op, arg in ops]
    finally:
        seq.close()
    mem, ids = opened("gather")

    async def one(amem: AsyncMemory, op: str, arg: Any) -> Any:
        return await amem.run(sync_call, ids, op, arg) if op in ("add", "update") \
            else await amem.read(sync_call, ids, op, arg)

    async def run() -> list[Any]:
        async with AsyncMemory(mem) as amem:
            return list(await asyncio.gather(*[one(amem, op, arg) for op, arg in ops]))

    assert asyncio.run(run()) == expected


def test_concurrent_searches_through_async_memory_equal_serial(mem: Memory) -> None:
    mem.add_many(BASE)
    want = {q: [(h.memory.memory_id, round(h.score, 9)) for h in mem.search(q, top_k=5)]
            for q in QUERIES}

    async def run() -> list[list[tuple[str, float]]]:
        amem = AsyncMemory(mem)
        got = await asyncio.gather(*[amem.search(q, top_k=5) for q in QUERIES * 4])
        return [[(h.memory.memory_id, round(h.score, 9)) for h in hs] for hs in got]

    for _ in range(3):
        assert asyncio.run(run()) == [want[q] for q in QUERIES * 4]
