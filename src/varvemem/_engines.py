"""What stands behind :class:`~varvemem.Memory`: its stores, its reads, the embedder, the LLM
client and each engine, built (and its module imported) when first needed.

The engines (and numpy with them) are imported on first use, so a command that only reads
records (``varvemem stats``, ``varvemem get``) loads none of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, overload

from ._args import Args
from .embeddings import check_installed, create_embedder
from .engines.reads import ReadEngine
from .settings import Settings
from .stores import Stores

if TYPE_CHECKING:
    from .embeddings import Embedder
    from .engines.context import ContextEngine
    from .engines.erasure import ErasureEngine
    from .engines.explain import ExplainEngine
    from .engines.faq import FaqEngine
    from .engines.lifecycle import LifecycleEngine
    from .engines.retrieval import RetrievalEngine
    from .engines.update import UpdateEngine
    from .llm import ChatClient
    from .stores.session_log import SessionLog


class _Builds(Protocol):
    _build_lock: threading.RLock


_O = TypeVar("_O", bound=_Builds)
_T = TypeVar("_T")


class OnFirstUse(Generic[_O, _T]):
    """A part built, and its module imported, when it is first read: once, whichever thread
    reads first. The value then sits in the instance's ``__dict__``, which later reads find
    before this (non-data) descriptor."""

    def __init__(self, build: Callable[[_O], _T]) -> None:
        self._build = build
        self._name = build.__name__
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> OnFirstUse[_O, _T]: ...
    @overload
    def __get__(self, obj: _O, owner: type | None = None) -> _T: ...

    def __get__(self, obj: _O | None, owner: type | None = None) -> OnFirstUse[_O, _T] | _T:
        if obj is None:
            return self
        with obj._build_lock:  # re-entrant: an engine's build reads the engines it needs
            if self._name not in obj.__dict__:
                obj.__dict__[self._name] = self._build(obj)
            value: _T = obj.__dict__[self._name]
            return value


class Engines:
    """The stores and engines of one :class:`~varvemem.Memory`. ``now``: the memory's
    clock."""

    def __init__(self, settings: Settings, now: Callable[[], datetime],
                 embedder: Embedder | None, llm: ChatClient | None) -> None:
        self.settings = settings
        self.now = now
        if embedder is None:  # its optional package, found without loading the model
            check_installed(settings.embedder.name)
        self._embedder = embedder
        self._embedder_lock = threading.Lock()
        self._build_lock = threading.RLock()  # see OnFirstUse
        self._own_llm = llm is None and settings.llm.enabled  # closed by close()
        if llm is None and settings.llm.enabled:
            from .llm import ChatClient

            llm = ChatClient(settings.llm)
        self.llm = llm
        self.stores = Stores(settings, self.model_id)
        self.reads = ReadEngine(settings, self.stores, now)
        self.args = Args(settings, self.reads)
        if settings.update.judge == "learned" and settings.update.judge_path is not None:
            from .engines import judge  # a judge file the user named is checked at start

            judge.choose("learned", settings.update.judge_path, self.embedder().model_id)

    def embedder(self) -> Embedder:
        """The embedding model, loaded on first use."""
        embedder = self._embedder
        if embedder is None:
            with self._embedder_lock:  # concurrent first reads load it once
                if self._embedder is None:
                    self._embedder = create_embedder(self.settings.embedder)
                embedder = self._embedder
        return embedder

    def model_id(self) -> tuple[str, int]:
        e = self.embedder()
        return e.model_id, e.dim

    def close(self) -> None:
        """Persist the vector index and close the store (and the LLM client made here)."""
        if "retrieval" in self.__dict__:  # built (see OnFirstUse)
            self.retrieval.close()
        self.stores.close()
        if self._own_llm and self.llm is not None:
            self.llm.close()

    @OnFirstUse
    def update(self) -> UpdateEngine:
        from .engines.update import UpdateEngine

        return UpdateEngine(self.settings, self.stores, self.embedder, self.now, self.llm)

    @OnFirstUse
    def retrieval(self) -> RetrievalEngine:
        from .engines.retrieval import RetrievalEngine

        return RetrievalEngine(self.settings, self.stores, self.embedder, self.now)

    @OnFirstUse
    def context(self) -> ContextEngine:
        from .engines.context import ContextEngine

        return ContextEngine(self.settings.context, self.retrieval)

    @OnFirstUse
    def lifecycle(self) -> LifecycleEngine:
        from .engines.lifecycle import LifecycleEngine

        return LifecycleEngine(self.settings, self.stores, self.update, self.now, self.llm)

    @OnFirstUse
    def faq(self) -> FaqEngine:
        from .engines.faq import FaqEngine

        return FaqEngine(self.settings, self.stores, self.update, self.retrieval,
                         self.embedder, self.now, self.llm, self.context, self.reads)

    @OnFirstUse
    def explain(self) -> ExplainEngine:
        from .engines.explain import ExplainEngine

        return ExplainEngine(self.retrieval, self.reads.current)

    @OnFirstUse
    def session_log(self) -> SessionLog:
        from .stores.session_log import SessionLog

        return SessionLog(self.settings.home / "sessions", self.settings.default_tenant)

    @OnFirstUse
    def erasure(self) -> ErasureEngine:
        from .engines.erasure import ErasureEngine

        return ErasureEngine(self.settings, self.stores, self.update, self.lifecycle,
                             self.session_log, self.now)
