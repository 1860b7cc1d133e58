"""The library API as coroutines: :class:`AsyncMemory`, for asyncio applications.

:class:`AsyncMemory` runs every call off the event loop, on the threads of one worker per
:class:`~varvemem.Memory` (ARCHITECTURE.md, Concurrency): **an arrival-order readers-writer
queue**. Reads (``search``, ``get``, ``context``... :data:`varvemem.operations.OPERATIONS`) run on
up to ``server.read_threads`` threads at once; writes (``_WRITES``, and :meth:`AsyncMemory.run`
with any function) on one writer thread, alone. Calls start in the order they were made: a
read waits for the writes made before it, a write for every call made before it. So
``asyncio.gather`` of adds and searches gives what the same calls in sequence give, and the
event loop never waits on SQLite, the embedder or the network.

Why futures of our own and not ``asyncio.to_thread`` behind an ``asyncio.Lock``: cancelling a
task that waits on ``to_thread`` releases the lock while the thread still runs the call, so
the next call could run beside it. Here a cancelled call that has not started yet never runs
(its future is cancelled in the queue), and one already running finishes before a write
after it starts; the cancelled caller gets ``CancelledError`` at once and nothing is left
held. Every ``AsyncMemory`` over the same ``Memory`` shares its worker, and
:meth:`AsyncMemory.run_blocking` lets synchronous code queue behind the same worker.

Why one typed line per method (``add = _Call(Memory.add)``) and not a loop that sets
attributes: a generated attribute is invisible to mypy (every call would be ``Any``), and a
stub would copy some forty signatures that can drift. :class:`_Call` takes the ``Memory``
method itself and gives its parameters (a ``ParamSpec``) to the coroutine, so mypy checks every
call against the real signature. The two methods with ``**kwargs`` (``add_many``,
``context``) do not fit ``Concatenate[Any, P]`` and are written out. ``tests/unit/test_aio.py``
fails when a public method of ``Memory`` or of a namespace has no counterpart here, when a
``_Call`` wraps another method than its name says, or when a written-out one's signature
differs.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import threading
import weakref
from collections.abc import Callable, Coroutine, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

import numpy as np

from . import operations
from ._namespaces import QA, Inbox
from .api import Clock, Memory
from .embeddings import Embedder
from .history import SessionHistory
from .keys import KeyRing
from .llm import ChatClient
from .model import AddResult
from .settings import Settings

__all__ = ["AsyncMemory"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

class _Job:
    """One call: the caller's future, whether it reads, and the function."""

    __slots__ = ("fn", "future", "read")

    def __init__(self, fn: Callable[[], Any], read: bool) -> None:
        self.fn, self.read = fn, read
        self.future: Future[Any] = Future()


class _Worker:
    """The threads a ``Memory`` runs on for its async callers: an arrival-order
    readers-writer queue. Calls start in the order they were made; a read starts once every
    write made before it has finished (beside the reads around it, up to ``read_threads`` at
    once), a write once every call made before it has finished, and runs alone."""

    def __init__(self, read_threads: int = 1) -> None:
        self.read_threads = read_threads
        self._lock = threading.Lock()
        self._queue: collections.deque[_Job] = collections.deque()
        self._reading = 0  # reads running
        self._writing = False  # a write running
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="varvemem-aio")
        self._readers: ThreadPoolExecutor | None = None  # made on the first read
        self._inside = threading.local()  # .job: set while this thread runs a call
        self.closed = False

    def on_worker(self) -> bool:
        return getattr(self._inside, "job", False)

    def submit(self, fn: Callable[[], T], read: bool = False) -> Future[T]:
        job = _Job(fn, read)
        with self._lock:
            if self.closed:
                raise RuntimeError("this AsyncMemory is closed")
            self._queue.append(job)
            self._pump()
        return job.future

    def _pump(self) -> None:
        """Start what the queue's head allows (the caller holds the lock)."""
        while self._queue and not self.closed:
            job = self._queue[0]
            if job.read:
                if self._writing or self._reading >= self.read_threads:
                    return
            elif self._writing or self._reading:
                return
            self._queue.popleft()
            if not job.future.set_running_or_notify_cancel():
                continue  # cancelled before it started: it never runs
            if job.read:
                self._reading += 1
                if self._readers is None:
                    self._readers = ThreadPoolExecutor(max_workers=self.read_threads,
                                                       thread_name_prefix="varvemem-aio-read")
                self._readers.submit(self._execute, job)
            else:
                self._writing = True
                self._writer.submit(self._execute, job)

    def _execute(self, job: _Job) -> None:
        self._inside.job = True
        try:
            result = job.fn()
        except BaseException as exc:
            job.future.set_exception(exc)
        else:
            job.future.set_result(result)
        finally:
            self._inside.job = False
            with self._lock:
                if job.read:
                    self._reading -= 1
                else:
                    self._writing = False
                self._pump()

    async def run(self, fn: Callable[[], T], read: bool = False) -> T:
        if self.on_worker():  # called from a function already running on the worker
            return fn()
        return await asyncio.wrap_future(self.submit(fn, read))

    def run_blocking(self, fn: Callable[[], T], read: bool = False) -> T:
        if self.on_worker():
            return fn()
        return self.submit(fn, read).result()

    def shutdown(self) -> None:
        with self._lock:
            self.closed = True
            left, self._queue = list(self._queue), collections.deque()
        for job in left:  # queued behind the close: they can no longer run
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(RuntimeError("this AsyncMemory is closed"))
        self._writer.shutdown(wait=False)
        if self._readers is not None:
            self._readers.shutdown(wait=False)


# One worker per Memory, whoever wraps it (an AsyncMemory, the LangChain retriever, the
# LangGraph store): two wrappers of one Memory must not run it on two threads.
_WORKERS: weakref.WeakKeyDictionary[Memory, _Worker] = weakref.WeakKeyDictionary()
_WORKERS_LOCK = threading.Lock()


def _worker_of(mem: Memory) -> _Worker:
    with _WORKERS_LOCK:
        worker = _WORKERS.get(mem)
        if worker is None or worker.closed:
            worker = _WORKERS[mem] = _Worker(mem.settings.server.read_threads)
        return worker


class _Facade:
    """What :class:`_Call` needs of its owner: the synchronous object and the worker."""

    _sync: Any
    _worker: _Worker
    # Which calls read (run beside each other) and which write (run alone), from
    # operations.OPERATIONS; every public method is in exactly one (tests/unit/test_aio.py).
    _READS: frozenset[str] = frozenset()
    _WRITES: frozenset[str] = frozenset()


class _Call(Generic[P, R]):
    """A coroutine counterpart of a synchronous method: ``add = _Call(Memory.add)`` makes
    ``await amem.add(...)`` run ``mem.add(...)`` on the memory's worker thread, with the same
    parameters (for mypy too) and docstring. The attribute's name picks the method it calls
    (``save_qa`` calls ``mem.save_qa``)."""

    def __init__(self, method: Callable[Concatenate[Any, P], R]) -> None:
        self.method = method
        self.name = getattr(method, "__name__", "")
        self.__doc__ = method.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> _Call[P, R]: ...
    @overload
    def __get__(self, obj: _Facade, owner: type) -> Callable[P, Coroutine[Any, Any, R]]: ...

    def __get__(self, obj: _Facade | None, owner: type
                ) -> _Call[P, R] | Callable[P, Coroutine[Any, Any, R]]:
        if obj is None:
            return self
        target = getattr(obj._sync, self.name)
        worker = obj._worker
        read = self.name in obj._READS

        @functools.wraps(target)
        async def call(*args: P.args, **kwargs: P.kwargs) -> R:
            result: R = await worker.run(functools.partial(target, *args, **kwargs), read)
            return result

        return call


class AsyncQA(_Facade):
    """``amem.qa``: :class:`varvemem._namespaces.QA` as coroutines."""

    _READS, _WRITES = operations.of("qa", True), operations.of("qa", False)

    def __init__(self, sync: QA, worker: _Worker) -> None:
        self._sync, self._worker = sync, worker

    save = _Call(QA.save)
    all = _Call(QA.all)
    search = _Call(QA.search)
    match = _Call(QA.match)
    update = _Call(QA.update)
    feedback = _Call(QA.feedback)
    report = _Call(QA.report)
    export = _Call(QA.export)
    import_folder = _Call(QA.import_folder)


class AsyncInbox(_Facade):
    """``amem.inbox``: :class:`varvemem._namespaces.Inbox` as coroutines."""

    _READS, _WRITES = operations.of("inbox", True), operations.of("inbox", False)

    def __init__(self, sync: Inbox, worker: _Worker) -> None:
        self._sync, self._worker = sync, worker

    receive = _Call(Inbox.receive)
    process = _Call(Inbox.process)
    counts = _Call(Inbox.counts)
    events = _Call(Inbox.events)
    retry = _Call(Inbox.retry)


class AsyncKeys(_Facade):
    """``amem.keys``: :class:`varvemem.keys.KeyRing` as coroutines."""

    _READS, _WRITES = operations.of("keys", True), operations.of("keys", False)

    def __init__(self, sync: KeyRing, worker: _Worker) -> None:
        self._sync, self._worker = sync, worker

    create = _Call(KeyRing.create)
    list = _Call(KeyRing.list)
    revoke = _Call(KeyRing.revoke)
    authenticate = _Call(KeyRing.authenticate)
    issue_link = _Call(KeyRing.issue_link)
    redeem_link = _Call(KeyRing.redeem_link)
    open_session = _Call(KeyRing.open_session)
    session = _Call(KeyRing.session)
    close_session = _Call(KeyRing.close_session)


class AsyncSessions(_Facade):
    """``amem.sessions``: :class:`varvemem.history.SessionHistory` as coroutines."""

    _READS, _WRITES = operations.of("sessions", True), operations.of("sessions", False)

    def __init__(self, sync: SessionHistory, worker: _Worker) -> None:
        self._sync, self._worker = sync, worker

    path = _Call(SessionHistory.path)
    save = _Call(SessionHistory.save)
    delete_session = _Call(SessionHistory.delete_session)
    erase_user = _Call(SessionHistory.erase_user)
    sessions = _Call(SessionHistory.sessions)
    load_session = _Call(SessionHistory.load_session)
    compress_history = _Call(SessionHistory.compress_history)
    summarise = _Call(SessionHistory.summarise)


class AsyncMemory(_Facade):
    """:class:`~varvemem.Memory` as coroutines, safe to call concurrently from an event loop.

    Every method of ``Memory`` (and of ``qa``, ``inbox``, ``keys``, ``sessions``) is here
    with the same parameters, as a coroutine run on the memory's own worker, in call order:
    reads beside each other, writes alone (see the module's docstring; a cancelled call that
    has not started never runs, and one that has finishes before a write after it).
    ``close()`` is :meth:`aclose`.

    >>> async with AsyncMemory(home="/tmp/mem") as amem:
    ...     mid = (await amem.add("The staging cluster is eks-stg-2")).memory_id
    ...     hits = await amem.search("which cluster is staging?")

    ``AsyncMemory(mem)`` wraps an open :class:`Memory` (every wrapper of one ``Memory``
    shares its worker; :meth:`aclose` closes the ``Memory``); ``AsyncMemory(home=...,
    settings=...)`` opens one like ``Memory(...)`` does, in the calling thread, and
    ``await AsyncMemory.open(...)`` opens it on the worker thread instead (a PostgreSQL
    connection, migrations: nothing blocks the event loop).
    """

    _READS = operations.of("", True)
    _WRITES = operations.of("", False) | {"run", "run_blocking"}
    # (``read`` and ``read_blocking`` are reads by definition.)

    def __init__(self, home: str | Path | Memory | None = None,
                 settings: Settings | None = None, *, clock: Clock | None = None,
                 embedder: Embedder | None = None, llm: ChatClient | None = None) -> None:
        if isinstance(home, Memory):
            if settings is not None or clock is not None or embedder is not None \
                    or llm is not None:
                raise TypeError("AsyncMemory(memory) takes no other argument")
            mem = home
        else:
            mem = Memory(home, settings, clock=clock, embedder=embedder, llm=llm)
        self._bind(mem)

    def _bind(self, mem: Memory) -> None:
        self._sync = mem
        self._worker = _worker_of(mem)
        self.qa = AsyncQA(mem.qa, self._worker)
        """L2: scored Q&A pairs, as coroutines (``await amem.qa.save(...)``)."""
        self.inbox = AsyncInbox(mem.inbox, self._worker)
        """The webhook inbox, as coroutines."""
        self.keys = AsyncKeys(mem.keys, self._worker)
        """API keys of the service, as coroutines."""
        self.sessions = AsyncSessions(mem.sessions, self._worker)
        """L1: per-session Markdown history, as coroutines."""

    @classmethod
    async def open(cls, home: str | Path | None = None, settings: Settings | None = None, *,
                   clock: Clock | None = None, embedder: Embedder | None = None,
                   llm: ChatClient | None = None) -> AsyncMemory:
        """Open a :class:`Memory` on a worker thread (the event loop goes on meanwhile)."""
        worker = _Worker()
        try:
            mem = await worker.run(lambda: Memory(home, settings, clock=clock,
                                                  embedder=embedder, llm=llm))
        except BaseException:
            worker.shutdown()
            raise
        worker.read_threads = mem.settings.server.read_threads  # before its first read
        with _WORKERS_LOCK:
            _WORKERS[mem] = worker
        self = cls.__new__(cls)
        self._bind(mem)
        return self

    # -- what is not a call -------------------------------------------------------------------
    @property
    def memory(self) -> Memory:
        """The synchronous :class:`Memory` underneath (its reads may run on many threads, its
        writes on one at a time: use :meth:`run_blocking` when async callers share it)."""
        mem: Memory = self._sync
        return mem

    @property
    def settings(self) -> Settings:
        """The memory's settings (read-only here)."""
        return self.memory.settings

    @property
    def clock(self) -> Clock:
        """The memory's clock."""
        return self.memory.clock

    @property
    def notices(self) -> list[str]:
        """Things the stores did on their own that a user should hear about."""
        return self.memory.notices

    async def run(self, fn: Callable[Concatenate[Memory, P], T], /, *args: P.args,
                  **kwargs: P.kwargs) -> T:
        """Run ``fn(memory, *args, **kwargs)`` on the writer thread: several calls of the
        synchronous API as one step that no other call of this memory interleaves with."""
        mem = self.memory
        return await self._worker.run(lambda: fn(mem, *args, **kwargs))

    async def read(self, fn: Callable[Concatenate[Memory, P], T], /, *args: P.args,
                   **kwargs: P.kwargs) -> T:
        """:meth:`run` for a function that only reads (the read methods of ``Memory``): it
        runs beside other reads, after the writes submitted before it and before those
        submitted after it."""
        mem = self.memory
        return await self._worker.run(lambda: fn(mem, *args, **kwargs), read=True)

    def run_blocking(self, fn: Callable[Concatenate[Memory, P], T], /, *args: P.args,
                     **kwargs: P.kwargs) -> T:
        """:meth:`run` for synchronous code: queue ``fn(memory, ...)`` behind the async calls
        and wait for it (in the calling thread; never on the event loop's own thread, which
        it would block)."""
        mem = self.memory
        return self._worker.run_blocking(lambda: fn(mem, *args, **kwargs))

    def read_blocking(self, fn: Callable[Concatenate[Memory, P], T], /, *args: P.args,
                      **kwargs: P.kwargs) -> T:
        """:meth:`read` for synchronous code (:meth:`run_blocking`'s reading twin)."""
        mem = self.memory
        return self._worker.run_blocking(lambda: fn(mem, *args, **kwargs), read=True)

    # -- closing ------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close the memory (:meth:`Memory.close`) after the calls already queued, then stop
        its worker thread. A second call does nothing."""
        worker = self._worker
        if worker.closed:
            return
        try:
            await worker.run(self.memory.close)
        finally:
            with _WORKERS_LOCK:
                if _WORKERS.get(self.memory) is worker:
                    del _WORKERS[self.memory]
            worker.shutdown()

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- Memory's methods, as coroutines ------------------------------------------------------
    embedder = _Call(Memory.embedder)
    add = _Call(Memory.add)
    add_messages = _Call(Memory.add_messages)
    add_tool_call = _Call(Memory.add_tool_call)
    add_event = _Call(Memory.add_event)
    ingest = _Call(Memory.ingest)
    ingest_text = _Call(Memory.ingest_text)
    update = _Call(Memory.update)
    feedback = _Call(Memory.feedback)
    delete = _Call(Memory.delete)
    get = _Call(Memory.get)
    resolve_id = _Call(Memory.resolve_id)
    history = _Call(Memory.history)
    search = _Call(Memory.search)
    why_not = _Call(Memory.why_not)
    context_budget = _Call(Memory.context_budget)
    session_window = _Call(Memory.session_window)
    stats = _Call(Memory.stats)
    overview = _Call(Memory.overview)
    index_stats = _Call(Memory.index_stats)
    check_store = _Call(Memory.check_store)
    save_qa = _Call(QA.save)
    load_all_qa = _Call(QA.all)
    search_qa = _Call(QA.search)
    ask = _Call(Memory.ask)
    consolidate = _Call(Memory.consolidate)
    due_jobs = _Call(Memory.due_jobs)
    schedule = _Call(Memory.schedule)
    close_session = _Call(Memory.close_session)
    restore = _Call(Memory.restore)
    tier_counts = _Call(Memory.tier_counts)
    get_all = _Call(Memory.get_all)
    changes = _Call(Memory.changes)
    delete_user = _Call(Memory.delete_user)
    reindex = _Call(Memory.reindex)

    # Written out: a ``**kwargs`` method does not fit ``Concatenate[Any, P]`` (mypy: its ``self``
    # could be passed by name), and api.py stays as it is. The test compares the signatures.
    async def add_many(self, items: Iterable[str | Mapping[str, Any]], *,
                       vectors: np.ndarray | None = None, **defaults: Any) -> list[AddResult]:
        return await self._worker.run(functools.partial(self.memory.add_many, items,
                                                        vectors=vectors, **defaults))

    async def context(self, query: str, *, max_tokens: int | None = None,
                      top_k: int | None = None, session: str | None = None,
                      **search_args: Any) -> str:
        return await self._worker.run(functools.partial(
            self.memory.context, query, max_tokens=max_tokens, top_k=top_k, session=session,
            **search_args), read=True)

    add_many.__doc__ = Memory.add_many.__doc__
    context.__doc__ = Memory.context.__doc__
