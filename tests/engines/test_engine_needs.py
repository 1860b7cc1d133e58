"""An engine works on what its protocols name and nothing more: the write and read paths run
over objects that hold only the settings sections (``settings/views.py``) and the store parts
(``stores/parts.py``) they declare, so a section or part read without being declared fails
here as well as in mypy."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import stores_of

from varvemem import Memory
from varvemem.engines.retrieval import RetrievalEngine
from varvemem.engines.retrieval.selection import ReadConfig, ReadStores
from varvemem.engines.update import UpdateEngine
from varvemem.engines.update.shared import WriteConfig, WriteStores
from varvemem.model import Draft, SearchFilter


def members(protocol: type) -> frozenset[str]:
    """The public names the protocol's parts declare."""
    return frozenset(name for cls in protocol.__mro__
                     if cls.__module__ in ("varvemem.settings.views", "varvemem.stores.parts")
                     for name in vars(cls) if not name.startswith("_"))


class Only:
    """``inner`` seen through ``protocol``: any other attribute is missing."""

    def __init__(self, inner: object, protocol: type) -> None:
        self._inner, self._protocol, self._names = inner, protocol, members(protocol)

    def __getattr__(self, name: str) -> Any:
        if name not in self._names:
            raise AttributeError(f"{name!r} is not in {self._protocol.__name__}")
        return getattr(self._inner, name)


def test_the_protocols_name_sections_and_parts() -> None:
    assert {"update", "types", "retrieval"} <= members(WriteConfig)
    assert {"records", "transaction", "vectors", "sync"} <= members(ReadStores)
    assert "store" not in members(ReadConfig) | members(WriteConfig)


def test_the_write_and_read_paths_run_on_what_they_declare(mem: Memory) -> None:
    e = mem._engines
    update = UpdateEngine(Only(mem.settings, WriteConfig), Only(stores_of(mem), WriteStores),  # type: ignore[arg-type]
                          e.embedder, e.now)
    old, = update.add([Draft(content="The build cache lives on cache-host-2")])
    new, = update.add([Draft(content="The build cache moved to cache-host-9")])
    assert new.superseded == [old.memory_id]
    read = RetrievalEngine(Only(mem.settings, ReadConfig), Only(stores_of(mem), ReadStores),  # type: ignore[arg-type]
                           e.embedder, e.now)
    hits = read.search("where is the build cache?", SearchFilter(tenant="default"))
    assert [h.memory.memory_id for h in hits][:1] == [new.memory_id]
    with pytest.raises(AttributeError, match="not in ReadConfig"):
        Only(mem.settings, ReadConfig).store  # noqa: B018
