"""Fast close (issue 21 item 4): close() leaves the index file alone for a small delta, the next
open catches up from the store of record, and a crash or a bad file still ends in a complete
index."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import stores_of

from varvemem import ConfigError, Memory, Settings
from varvemem.model import SearchFilter

FILE = Path("vectors") / "vectors.npz"
FACTS = ["the release train leaves on Thursdays", "Grafana dashboards live in the obs folder",
         "the payments team owns the PSP adapter", "backups of the ledger run at 02:00 UTC",
         "Kafka topics are created through the platform portal"]


def _open(home: Path, embedder, clock, **local) -> Memory:
    """A memory whose local index has the ``store.local`` settings ``local``."""
    return Memory(settings=Settings.load(home=home, store={"local": local}), embedder=embedder,
                  clock=clock)


def _file_seq(home: Path) -> int:
    with np.load(home / FILE, allow_pickle=False) as z:
        return int(json.loads(z["meta"].tobytes())["seq"])


def _index_state(mem: Memory) -> dict[str, bool]:
    """Every vector the index holds, with its ``valid`` flag (a superseded memory's is False)."""
    index = stores_of(mem).vectors
    everything = SearchFilter(include_superseded=True)
    q = np.zeros(index.dim, np.float32)
    q[0] = 1.0
    hits = {m for m, _ in index.search(q, len(index) + 10, everything)}
    current = {m for m, _ in index.search(q, len(index) + 10, SearchFilter())}
    return {m: m in current for m in hits}


def _rebuilt_state(home: Path, embedder, clock) -> dict[str, bool]:
    with _open(home, embedder, clock) as mem:
        stores_of(mem).rebuild_vectors()
        return _index_state(mem)


def test_setting_is_validated(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"store\.local\.close_save_changes"):
        Settings.load(home=tmp_path, store={"local": {"close_save_changes": -1}})
    assert Settings.load(home=tmp_path).store.local.close_save_changes == 5_000
    with pytest.raises(ConfigError, match=r"store\.local\.graph_file_vectors"):
        Settings.load(home=tmp_path, store={"local": {"graph_file_vectors": "sometimes"}})
    assert Settings.load(home=tmp_path).store.local.graph_file_vectors is False


def test_small_delta_leaves_the_file_and_the_next_open_has_every_change(
        home: Path, embedder, clock) -> None:
    with _open(home, embedder, clock) as mem:
        ids = [r.memory_id for r in mem.add_many(
            [f"runbook entry {i} for service-{i}" for i in range(60)])]
        old = mem.add("Staging runs on cluster eks-stg-2").memory_id
    before = (home / FILE).stat().st_mtime_ns, _file_seq(home)
    clock.advance(days=1)
    with _open(home, embedder, clock) as mem:
        added = mem.add("the release train leaves on Thursdays").memory_id
        new = mem.add("Staging now runs on cluster eks-stg-3")
        assert new.superseded == [old]
        mem.delete(ids[0])
        mem.delete(ids[1])
        assert stores_of(mem).vectors.dirty > 0
    assert ((home / FILE).stat().st_mtime_ns, _file_seq(home)) == before  # not rewritten
    with _open(home, embedder, clock) as mem:
        state = _index_state(mem)
        assert state[added] and state[new.memory_id]
        assert state[old] is False  # superseded: kept, but no longer current
        assert ids[0] not in state and ids[1] not in state
        assert mem.search("when does the release train leave")[0].memory.memory_id == added
        assert mem.notices == []
    assert state == _rebuilt_state(home, embedder, clock)


def test_changes_add_up_over_short_sessions_until_a_close_saves(home: Path, embedder,
                                                                clock) -> None:
    with _open(home, embedder, clock, close_save_changes=10) as mem:
        mem.add_many([f"runbook entry {i} for service-{i}" for i in range(30)])
    first = _file_seq(home)
    seqs = []
    for s in range(6):  # 3 changes a session: the file is 3, 6, 9, 12 ... changes behind
        with _open(home, embedder, clock, close_save_changes=10) as mem:
            mem.add_many([f"deploy note {s}-{j} for cluster-{s}{j}" for j in range(3)])
        seqs.append(_file_seq(home))
    assert seqs[:3] == [first] * 3  # 3, 6, 9 changes behind: left alone
    assert seqs[3] > first  # the fourth short session brought it to 12 >= 10: saved
    assert seqs[4] == seqs[5] == seqs[3]  # 3 and 6 behind the new file
    with _open(home, embedder, clock) as mem:
        assert len(stores_of(mem).vectors) == 30 + 18


def test_zero_saves_at_every_close(home: Path, embedder, clock) -> None:
    with _open(home, embedder, clock, close_save_changes=0) as mem:
        mem.add_many([f"runbook entry {i} for service-{i}" for i in range(10)])
    with _open(home, embedder, clock, close_save_changes=0) as mem:
        mem.add("the release train leaves on Thursdays")
        seq = stores_of(mem).records.vector_seq()
    assert _file_seq(home) == seq


def test_acknowledged_adds_survive_a_kill_9_without_close(home: Path, embedder, clock) -> None:
    with _open(home, embedder, clock) as mem:
        base = [r.memory_id for r in mem.add_many(
            [f"runbook entry {i} for service-{i}" for i in range(40)])]
    before = _file_seq(home)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: acknowledges its writes on the pipe, then dies by SIGKILL
        try:
            os.close(r)
            child = _open(home, embedder, clock)
            for text in FACTS:
                mid = child.add(text).memory_id
                os.write(w, f"add {mid}\n".encode())
            child.delete(base[0])
            os.write(w, f"del {base[0]}\n".encode())
        finally:
            os.kill(os.getpid(), signal.SIGKILL)
    os.close(w)
    out = b""
    while chunk := os.read(r, 65536):
        out += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    acked = [line.split() for line in out.decode().splitlines()]
    assert len(acked) == 6
    assert _file_seq(home) == before  # the child never saved
    with _open(home, embedder, clock) as mem:
        state = _index_state(mem)
        for op, mid in acked:
            assert (mid in state) == (op == "add"), (op, mid)
        for text, (_, mid) in zip(FACTS, acked):
            assert mem.search(text)[0].memory.memory_id == mid
    assert state == _rebuilt_state(home, embedder, clock)


SMALL = {"hnsw_threshold": 20, "exact_filter_limit": 20}


@pytest.mark.parametrize("damage", ["truncated", "garbage", "graph truncated"])
def test_bad_index_file_is_rebuilt_from_the_store_with_one_notice(home: Path, embedder, clock,
                                                                  damage: str) -> None:
    with _open(home, embedder, clock, **SMALL) as mem:
        mem.add_many([f"runbook entry {i} for service-{i}" for i in range(50)])
        mid = mem.add("the release train leaves on Thursdays").memory_id
    # past both limits the graph file alone holds the vectors: no copy in vectors.npz
    path = next((home / "vectors").glob("*.usearch")) if damage.startswith("graph") \
        else home / FILE
    data = path.read_bytes()
    path.write_bytes(b"\x00" * len(data) if damage == "garbage" else data[: len(data) // 2])
    with _open(home, embedder, clock, **SMALL) as mem:
        assert mem.search("when does the release train leave")[0].memory.memory_id == mid
        assert len(mem.notices) == 1 and "rebuilt from SQLite" in mem.notices[0]
        assert "\n" not in mem.notices[0]
        assert len(stores_of(mem).vectors) == 51
    # the rebuilt index replaced the bad file at close, small as its delta was
    with _open(home, embedder, clock, **SMALL) as mem:
        assert mem.search("when does the release train leave")[0].memory.memory_id == mid
        assert mem.notices == []


@pytest.mark.parametrize("copy", [False, True])
def test_each_vector_is_on_disk_once_unless_the_graph_file_keeps_a_copy(
        home: Path, embedder, clock, copy: bool) -> None:
    """``store.local.graph_file_vectors``: by default the graph file holds the graph's links alone
    (it starts with usearch's head), and an open reads the vectors from the store of record."""
    with _open(home, embedder, clock, graph_file_vectors=copy, **SMALL) as mem:
        ids = [r.memory_id for r in mem.add_many(
            [f"runbook entry {i} for service-{i}" for i in range(50)])]
        mid = mem.add("the release train leaves on Thursdays").memory_id
        mem.delete(ids[3])  # a removed slot: its vector is gone from the store
    with np.load(home / FILE, allow_pickle=False) as z:
        assert json.loads(z["meta"].tobytes())["graph_vectors"] == ("file" if copy else "store")
    graph = next((home / "vectors").glob("*.usearch")).read_bytes()
    assert graph.startswith(b"usearch") != copy  # a copy starts with the vectors' count
    kept = [*ids, mid]
    with _open(home, embedder, clock, graph_file_vectors=copy, **SMALL) as mem:
        assert mem.search("when does the release train leave")[0].memory.memory_id == mid
        assert mem.notices == [] and len(stores_of(mem).vectors) == 50
        held = stores_of(mem).vectors.vectors(kept)
    # Each vector as a rebuild from the store gives it (read by id: enumerating a graph of 50
    # through searches may miss a node it cannot reach).
    with _open(home, embedder, clock) as mem:
        stores_of(mem).rebuild_vectors()
        rebuilt = stores_of(mem).vectors.vectors(kept)
    assert held.keys() == rebuilt.keys() == set(kept) - {ids[3]}
    assert max(float(np.abs(held[m] - rebuilt[m]).max()) for m in held) < 1e-3
