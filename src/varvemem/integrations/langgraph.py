"""A LangGraph store (``langgraph.store.base.BaseStore``) kept in varvemem.

:class:`VarvememStore` gives a LangGraph graph (``graph.compile(store=...)``,
``create_react_agent(..., store=...)``) long-term memory in a varvemem home: every item is a
``knowledge`` memory, searched with varvemem's hybrid search, erased with the user
(:meth:`varvemem.Memory.delete_user`) and kept with its history.

How an item maps onto a memory:

* **scope**: the store's ``tenant`` and ``agent``; the **user** is the namespace's element at
  ``user_at`` (default 0, the first: ``("alice", "memories")`` is alice's; ``None``: no user).
  LangMem's default namespace ``("memories", "{langgraph_user_id}")`` has its user second:
  give ``user_at=1`` (with the default every LangMem user's items would be user
  ``memories``'s, and ``delete_user(id)`` would not erase them);
  the **session** is ``lg-`` and a hash of the namespace and key, so one item is one memory
  and varvemem never merges two items nor takes one for another's duplicate;
* **metadata** ``langgraph``: ``namespace`` (a list), ``key``, ``value`` (the JSON dict as
  given) and ``indexed``;
* **times**: the item's ``updated_at`` is the memory's ``updated_at`` and its ``created_at``
  the memory's ``created_at`` (never after its ``updated_at``): what the engine recorded when
  it wrote the memory, never a value a writer put in the metadata;
* **content** (what search reads): the value's fields at the ``index`` paths (the store's
  ``index={"fields": [...]}``, or a put's own ``index=[...]``), one per line; by default the
  whole value, one ``path: value`` line per leaf. An item put with ``index=False`` has its
  key as content and is left out of query searches;
* type ``knowledge``, tier ``long_term``, no TTL (the lifecycle keeps it), tags
  ``langgraph`` and the store's ``tags``.

A memory is an item when it is what a store of the same tenant, agent and ``user_at`` would
write: type ``knowledge``, tag ``langgraph``, that agent, the namespace's user and session, and
well-formed ``langgraph`` metadata. One written so by another surface (REST, MCP, a script)
is an item like any other, with the engine's times; anything else is not an item. If several
memories hold one key (two processes putting a new key at once), the newest is the item, a
put updates it and deletes the others, and a delete deletes them all.

A put of an existing key **updates its memory in place** (:meth:`varvemem.Memory.update`:
the old value stays in :meth:`~varvemem.Memory.history`); a put of ``None`` deletes it (the
last state stays in history). A search with a ``query`` is :meth:`varvemem.Memory.search`
ranking every indexed item as ``InMemoryStore`` does, none dropped for relevance (LangMem
searches before it writes: a dropped item would be written again); ``score`` is the hit's
score (under the ``learned`` profile, its relevance x TTL weight). Without a query, items come
newest update first.
``filter`` compares value fields as LangGraph's ``InMemoryStore`` does (equality, nested
dicts, ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``).

Within a batch, gets, searches and namespace listings see the store as it was before the
batch, and the batch's puts apply after them, the last put of a key winning (as
``InMemoryStore`` does). Everything runs on the memory's worker thread
(:mod:`varvemem.aio`), so ``batch`` and ``abatch`` calls never interleave. The store keeps an
index of its items (namespace and key to memory), read once from the memory
(:meth:`~varvemem.Memory.get_all`, one scan of the tenant's knowledge) and brought up to date
before every batch from the memory's change feed (:meth:`~varvemem.Memory.changes`): what was
written or removed since, by this store, another store or another process. So every store
over one memory sees the same items, and a batch costs one read of the feed (one row when
nothing was written), not a scan. No TTL (``supports_ttl`` is False): varvemem's lifecycle
decides what is forgotten.

Needs ``langgraph-checkpoint``: ``pip install 'varvemem[langgraph]'``. Only the public
:class:`varvemem.Memory` API is used.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..aio import AsyncMemory
from ..api import Memory
from ..errors import ConfigError, NotFoundError, ValidationError
from ..model import MemoryRecord, MemoryType

try:
    from langchain_core.stores import BaseStore as LangChainKV
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
    from langgraph.store.base.embed import get_text_at_path
except ImportError as exc:  # the optional extra is not installed
    raise ConfigError(f"varvemem.integrations.langgraph needs langgraph-checkpoint ({exc}): "
                      "pip install 'varvemem[langgraph]'") from None

__all__ = ["VarvememKeyValueStore", "VarvememStore"]

META = "langgraph"  # the metadata key of an item
TAG = "langgraph"
_PAGE = 1000

Key = tuple[tuple[str, ...], str]


@dataclass(frozen=True)
class _Entry:
    memory_id: str
    key: Key
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    indexed: bool

    def item(self) -> Item:
        return Item(value=dict(self.value), key=self.key[1], namespace=self.key[0],
                    created_at=self.created_at, updated_at=self.updated_at)

    def search_item(self, score: float | None) -> SearchItem:
        return SearchItem(namespace=self.key[0], key=self.key[1], value=dict(self.value),
                          created_at=self.created_at, updated_at=self.updated_at, score=score)

    def newness(self) -> tuple[datetime, str]:
        return self.updated_at, self.memory_id


class VarvememStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are varvemem memories (see the module).

    ``memory``: a :class:`varvemem.Memory` or :class:`varvemem.AsyncMemory`. ``tenant``,
    ``agent``: the scope of every item. ``user_at``: which namespace element is the user
    (``None``: none; LangMem's ``("memories", "{langgraph_user_id}")`` needs ``1``).
    ``index``: ``{"fields": [...]}``, the value paths search reads (default: the whole value);
    varvemem embeds with its own model, so ``dims`` and ``embed`` are refused. ``tags``: more
    tags for every item's memory.
    """

    supports_ttl = False

    def __init__(self, memory: Memory | AsyncMemory, *, tenant: str | None = None,
                 agent: str | None = None, user_at: int | None = 0,
                 index: Mapping[str, Any] | None = None, tags: Sequence[str] = ()) -> None:
        if not isinstance(memory, (Memory, AsyncMemory)):
            raise ValidationError("memory must be a varvemem Memory or AsyncMemory")
        self._amem = memory if isinstance(memory, AsyncMemory) else AsyncMemory(memory)
        self.tenant = tenant
        self.agent = agent
        if user_at is not None and (not isinstance(user_at, int) or isinstance(user_at, bool)
                                    or user_at < 0):
            raise ValidationError("user_at must be a namespace position (0, 1, ...) or None")
        self.user_at = user_at
        index = dict(index or {})
        unknown = sorted(set(index) - {"fields"})
        if unknown:
            raise ValidationError(f"index: {', '.join(unknown)} not supported (varvemem embeds "
                                  "with its own model; give only 'fields')")
        fields = index.get("fields", ["$"])
        if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
            raise ValidationError("index fields must be a list of paths")
        self.fields: list[str] = list(fields)
        self.tags = [TAG, *tags]
        # As of the change feed's ``_position`` (None: not read yet): the item memories known,
        # the ones holding each key (normally one), and each namespace's items (each key's
        # newest holder), kept per key as the feed brings changes: no read walks them all.
        self._by_id: dict[str, _Entry] = {}
        self._holders: dict[Key, set[str]] = {}
        self._items: dict[tuple[str, ...], dict[str, _Entry]] = {}
        self._position: int | None = None

    # -- BaseStore ------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self._amem.run_blocking(self._apply, list(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await self._amem.run(self._apply, list(ops))

    # -- the batch, on the memory's worker ------------------------------------------------------
    def _apply(self, mem: Memory, ops: list[Op]) -> list[Result]:
        for op in ops:
            _check(op)
        self._catch_up(mem)
        results: list[Result] = []
        puts: dict[Key, PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                entry = self._item((tuple(op.namespace), op.key))
                results.append(None if entry is None else entry.item())
            elif isinstance(op, SearchOp):
                results.append(self._search(mem, op))
            elif isinstance(op, ListNamespacesOp):
                results.append(_list_namespaces(self._items, op))
            elif isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
            else:
                raise ValueError(f"unknown operation {type(op).__name__}")
        for key, op in puts.items():
            self._put(mem, key, op)
        return results

    def _catch_up(self, mem: Memory) -> None:
        """Bring the index up to the memory's change feed: the first time a scan of the
        tenant's knowledge (the feed's position taken before it, so nothing written during
        the scan is missed), then what was written or removed since the last batch."""
        if self._position is None:
            start = mem.changes(tenant=self.tenant).position
            after = ""
            while True:
                page = mem.get_all(tenant=self.tenant, types=["knowledge"],
                                   include_superseded=True, limit=_PAGE, after=after)
                for rec in page:
                    self._learn(rec)
                if len(page) < _PAGE:
                    break
                after = page[-1].memory_id
            self._position = start
        changed = mem.changes(self._position, tenant=self.tenant, types=["knowledge"])
        for memory_id in changed.removed:
            self._forget(memory_id)
        for rec in changed.written:
            self._learn(rec)
        self._position = changed.position

    def _learn(self, rec: MemoryRecord) -> None:
        """``rec`` as it is now: an item's memory, or (no longer) none."""
        self._forget(rec.memory_id)
        entry = self._entry(rec)
        if entry is not None:
            self._by_id[rec.memory_id] = entry
            self._holders.setdefault(entry.key, set()).add(rec.memory_id)
            self._settle(entry.key)

    def _forget(self, memory_id: str) -> None:
        old = self._by_id.pop(memory_id, None)
        if old is not None:
            self._holders[old.key].discard(memory_id)
            self._settle(old.key)

    def _settle(self, key: Key) -> None:
        """``key``'s item after a change to its holders: the newest, or none."""
        namespace, name = key
        holders = self._holders.get(key)
        if holders:
            self._items.setdefault(namespace, {})[name] = max(
                (self._by_id[i] for i in holders), key=_Entry.newness)
            return
        self._holders.pop(key, None)
        names = self._items.get(namespace, {})
        names.pop(name, None)
        if not names:
            self._items.pop(namespace, None)

    def _item(self, key: Key) -> _Entry | None:
        return self._items.get(key[0], {}).get(key[1])

    def _entry(self, rec: MemoryRecord) -> _Entry | None:
        """The item ``rec`` is, if it is one as this store writes them (see the module)."""
        meta = rec.metadata.get(META)
        if not isinstance(meta, Mapping) or rec.memory_type is not MemoryType.KNOWLEDGE \
                or TAG not in rec.tags or rec.scope.agent != self.agent:
            return None
        namespace, key, value = meta.get("namespace"), meta.get("key"), meta.get("value")
        if not isinstance(namespace, list) or not namespace or not all(
                isinstance(p, str) and p for p in namespace) or not isinstance(key, str) \
                or not isinstance(value, dict):
            return None
        ns = tuple(namespace)
        if rec.scope.user != self._user(ns) or rec.scope.session != _session(ns, key):
            return None
        updated = _utc(rec.updated_at)
        return _Entry(rec.memory_id, (ns, key), value, min(_utc(rec.created_at), updated),
                      updated, meta.get("indexed", True) is not False)

    def _user(self, namespace: tuple[str, ...]) -> str | None:
        if self.user_at is not None and len(namespace) > self.user_at:
            return namespace[self.user_at]
        return None

    def _search(self, mem: Memory, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)

        def wanted(entry: _Entry) -> bool:
            return entry.key[0][: len(prefix)] == prefix and (
                not op.filter or _matches(entry.value, op.filter))

        if not op.query:
            chosen = sorted((e for ns, names in self._items.items()
                             if ns[: len(prefix)] == prefix for e in names.values()
                             if wanted(e)),
                            key=lambda e: (-e.updated_at.timestamp(), e.key))
            return [e.search_item(None) for e in chosen[op.offset: op.offset + op.limit]]
        # Ranked as InMemoryStore ranks (every indexed item, nothing dropped for relevance:
        # LangMem searches before it writes).
        hits = mem.search(op.query, top_k=max(50, 4 * (op.offset + op.limit)),
                          type="knowledge", tags=[TAG], user=self._user(prefix),
                          agent=self.agent, tenant=self.tenant, include_superseded=True,
                          min_relevance=0.0)
        out: list[SearchItem] = []
        for hit in hits:
            entry = self._by_id.get(hit.memory.memory_id)
            if entry is not None and self._item(entry.key) is entry and entry.indexed \
                    and wanted(entry):
                out.append(entry.search_item(hit.score))
        return out[op.offset: op.offset + op.limit]

    def _put(self, mem: Memory, key: Key, op: PutOp) -> None:
        """Write one key (the index learns it from the change feed before the next batch)."""
        holders = sorted((self._by_id[i] for i in self._holders.get(key, ())),
                         key=_Entry.newness, reverse=True)  # the first is the item
        if op.value is None:
            for entry in holders:
                self._delete(mem, entry.memory_id, "langgraph store: deleted")
            return
        if getattr(op, "ttl", None) is not None:
            raise NotImplementedError("VarvememStore has no TTL (supports_ttl is False): "
                                      "varvemem's lifecycle decides what is forgotten")
        namespace, name = key
        value = _json_dict(op.value)
        indexed = op.index is not False
        paths = self.fields if op.index is None or op.index is False else list(op.index)
        text = _text(value, paths) if indexed else ""
        if not text.strip():
            text, indexed = name, False
        meta = {META: {"namespace": list(namespace), "key": name, "value": value,
                       "indexed": indexed}}
        for extra in holders[1:]:  # one memory per key
            self._delete(mem, extra.memory_id, "langgraph store: another memory holds the key")
        if holders:
            with contextlib.suppress(NotFoundError):  # else deleted since: put anew
                mem.update(holders[0].memory_id, content=text, metadata=meta,
                           reason="langgraph store: put", tenant=self.tenant)
                return
        res = mem.add(text, type="knowledge", tags=self.tags, user=self._user(namespace),
                      agent=self.agent, session=_session(namespace, name), tenant=self.tenant,
                      tier="long_term", ttl_mode="off", metadata=meta)
        if res.status != "created":  # the same text is in the key's session already
            mem.update(res.memory_id, content=text, metadata=meta,
                       reason="langgraph store: put", tenant=self.tenant)

    def _delete(self, mem: Memory, memory_id: str, reason: str) -> None:
        with contextlib.suppress(NotFoundError):  # gone already
            mem.delete(memory_id, reason=reason, tenant=self.tenant)


# -- helpers ---------------------------------------------------------------------------------------

def _check(op: Op) -> None:
    if isinstance(op, (GetOp, PutOp)):
        labels: Sequence[Any] = op.namespace
        if isinstance(op, PutOp) and not labels:
            raise InvalidNamespaceError("Namespace cannot be empty.")
    elif isinstance(op, SearchOp):
        labels = op.namespace_prefix
    elif isinstance(op, ListNamespacesOp):
        labels = [p for c in op.match_conditions or () for p in c.path]
    else:
        return
    for label in labels:
        if not isinstance(label, str) or not label:
            raise InvalidNamespaceError(f"namespace labels must be non-empty text: {labels!r}")


def _session(namespace: tuple[str, ...], key: str) -> str:
    digest = hashlib.sha256(json.dumps([*namespace, key], ensure_ascii=False).encode()).hexdigest()
    return f"lg-{digest[:32]}"


def _utc(t: datetime) -> datetime:
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _json_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValidationError("a store value must be a dict")
    try:  # what the memory keeps: JSON, given back as it went in
        out: dict[str, Any] = json.loads(json.dumps(dict(value), ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"a store value must be JSON: {exc}") from None
    return out


def _leaves(value: Any, path: str) -> list[str]:
    if isinstance(value, Mapping):
        return [line for k, v in value.items()
                for line in _leaves(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [line for v in value for line in _leaves(v, path)]
    if value is None:
        return []
    return [f"{path}: {value}" if path else str(value)]


def _text(value: dict[str, Any], paths: Sequence[str]) -> str:
    """What search reads of a value: its leaves (``$``) or the texts at ``paths``."""
    lines: list[str] = []
    for path in paths:
        if path == "$":
            lines += _leaves(value, "")
        else:
            lines += [t for t in get_text_at_path(value, path) if t.strip()]
    return "\n".join(lines)


def _matches(value: Mapping[str, Any], flt: Mapping[str, Any]) -> bool:
    return all(_compare(value.get(k), v) for k, v in flt.items())


_OPS = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"}


def _compare(item: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in wanted):
            return all(_operator(item, op, arg) for op, arg in wanted.items())
        return isinstance(item, Mapping) and all(_compare(item.get(k), v)
                                                 for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return isinstance(item, (list, tuple)) and len(item) == len(wanted) and all(
            _compare(a, b) for a, b in zip(item, wanted))
    return bool(item == wanted)


def _operator(item: Any, op: str, arg: Any) -> bool:
    if op not in _OPS:
        raise ValueError(f"unsupported filter operator {op!r} (known: {', '.join(sorted(_OPS))})")
    if op == "$eq":
        return bool(item == arg)
    if op == "$ne":
        return bool(item != arg)
    if item is None:
        return False
    a, b = float(item), float(arg)
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _does_match(cond: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(cond.path)
    if len(namespace) < len(path):
        return False
    if cond.match_type == "prefix":
        pairs = zip(namespace, path)
    elif cond.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path))
    else:
        raise ValueError(f"unsupported match type {cond.match_type!r}")
    return all(p == "*" or n == p for n, p in pairs)


def _list_namespaces(items: Mapping[tuple[str, ...], Any], op: ListNamespacesOp
                     ) -> list[tuple[str, ...]]:
    namespaces = set(items)
    if op.match_conditions:
        namespaces = {ns for ns in namespaces
                      if all(_does_match(c, ns) for c in op.match_conditions)}
    if op.max_depth is not None:
        namespaces = {ns[: op.max_depth] for ns in namespaces}
    return sorted(namespaces)[op.offset: op.offset + op.limit]


class VarvememKeyValueStore(LangChainKV[str, Any]):
    """LangChain's key-value ``BaseStore`` (``mget``/``mset``/``mdelete``/``yield_keys``, and
    their async variants) over a :class:`VarvememStore`: one namespace (default ``("kv",)``),
    each key one item, so a ``CacheBackedEmbeddings`` cache or a ``ParentDocumentRetriever``
    docstore can live in varvemem too. Values are JSON (str, numbers, lists, dicts...), bytes,
    or LangChain serialisable objects such as ``Document`` (read back with
    ``langchain_core.load``, core classes only). Items are put with ``index=False``: kept, not
    searched."""

    def __init__(self, store: VarvememStore, namespace: Sequence[str] = ("kv",)) -> None:
        if not isinstance(store, VarvememStore):
            raise ValidationError("store must be a VarvememStore")
        self.store = store
        self.namespace = tuple(namespace)
        if not self.namespace:
            raise ValidationError("namespace must have at least one element")

    def mget(self, keys: Sequence[str]) -> list[Any | None]:
        results = self.store.batch([GetOp(self.namespace, _kv_key(k)) for k in keys])
        return [None if r is None else _kv_decode(r.value) for r in results]  # type: ignore[union-attr]

    def mset(self, key_value_pairs: Sequence[tuple[str, Any]]) -> None:
        self.store.batch([PutOp(self.namespace, _kv_key(k), _kv_encode(v), index=False)
                          for k, v in key_value_pairs])

    def mdelete(self, keys: Sequence[str]) -> None:
        self.store.batch([PutOp(self.namespace, _kv_key(k), None) for k in keys])

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        offset = 0
        while True:
            page = self.store.search(self.namespace, limit=_PAGE, offset=offset)
            yield from self._keys(page, prefix)
            if len(page) < _PAGE:
                return
            offset += _PAGE

    async def amget(self, keys: Sequence[str]) -> list[Any | None]:
        results = await self.store.abatch([GetOp(self.namespace, _kv_key(k)) for k in keys])
        return [None if r is None else _kv_decode(r.value) for r in results]  # type: ignore[union-attr]

    async def amset(self, key_value_pairs: Sequence[tuple[str, Any]]) -> None:
        await self.store.abatch([PutOp(self.namespace, _kv_key(k), _kv_encode(v), index=False)
                                 for k, v in key_value_pairs])

    async def amdelete(self, keys: Sequence[str]) -> None:
        await self.store.abatch([PutOp(self.namespace, _kv_key(k), None) for k in keys])

    async def ayield_keys(self, *, prefix: str | None = None) -> AsyncIterator[str]:
        offset = 0
        while True:
            page = await self.store.asearch(self.namespace, limit=_PAGE, offset=offset)
            for key in self._keys(page, prefix):
                yield key
            if len(page) < _PAGE:
                return
            offset += _PAGE

    def _keys(self, page: list[SearchItem], prefix: str | None) -> list[str]:
        """The keys of ``page`` in this namespace itself (a search also finds the ones below
        it) that start with ``prefix``."""
        return [i.key for i in page if i.namespace == self.namespace
                and (prefix is None or i.key.startswith(prefix))]


def _kv_key(key: Any) -> str:
    if not isinstance(key, str) or not key:
        raise ValidationError("a key must be non-empty text")
    return key


def _kv_encode(value: Any) -> dict[str, Any]:
    from langchain_core.load import Serializable, dumpd

    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, Serializable):
        return {"lc": dumpd(value)}
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise ValidationError(f"a value must be JSON, bytes or a LangChain serialisable object "
                              f"(got {type(value).__name__})") from None
    return {"json": value}


def _kv_decode(stored: dict[str, Any]) -> Any:
    if "bytes" in stored:
        return base64.b64decode(stored["bytes"])
    if "lc" in stored:
        import warnings

        from langchain_core._api import LangChainBetaWarning
        from langchain_core.load import load

        with warnings.catch_warnings():  # "load is in beta": it is what dumpd is read with
            warnings.simplefilter("ignore", LangChainBetaWarning)
            return load(stored["lc"], allowed_objects="core")
    return stored.get("json")
