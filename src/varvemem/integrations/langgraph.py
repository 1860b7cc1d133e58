"""A LangGraph store (``langgraph.store.base.BaseStore``) kept in varvemem.

:class:`VarvememStore` gives a LangGraph graph (``graph.compile(store=...)``,
``create_react_agent(..., store=...)``) long-term memory in a varvemem home: every item is a
``knowledge`` memory, searched with varvemem's hybrid search, erased with the user
(:meth:`varvemem.Memory.delete_user`) and kept with its history.

How an item maps onto a memory:

* **scope**: the store's ``tenant`` and ``agent``; the **user** is the namespace's element at
  ``user_at`` (default 0, the first: ``("alice", "memories")`` is alice's; ``None``: no user);
  the **session** is ``lg-`` and a hash of the namespace and key, so one item is one memory
  and varvemem never merges two items nor takes one for another's duplicate;
* **metadata** ``langgraph``: ``namespace`` (a list), ``key``, ``value`` (the JSON dict as
  given), ``created_at``/``updated_at`` (ISO 8601) and ``indexed``;
* **content** (what search reads): the value's fields at the ``index`` paths (the store's
  ``index={"fields": [...]}``, or a put's own ``index=[...]``), one per line; by default the
  whole value, one ``path: value`` line per leaf. An item put with ``index=False`` has its
  key as content and is left out of query searches;
* type ``knowledge``, tier ``long_term``, no TTL (the lifecycle keeps it), tags
  ``langgraph`` and the store's ``tags``.

A put of an existing key **updates its memory in place** (:meth:`varvemem.Memory.update`:
the old value stays in :meth:`~varvemem.Memory.history`); a put of ``None`` deletes it (the
last state stays in history). A search with a ``query`` is :meth:`varvemem.Memory.search`
(best first, ``score`` the hit's score; varvemem's relevance floor may return fewer than
``limit``, or nothing for an unrelated query); without one, items come newest update first.
``filter`` compares value fields as LangGraph's ``InMemoryStore`` does (equality, nested
dicts, ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``).

Within a batch, gets, searches and namespace listings see the store as it was before the
batch, and the batch's puts apply after them, the last put of a key winning (as
``InMemoryStore`` does). Everything runs on the memory's worker thread
(:mod:`varvemem.aio`), so ``batch`` and ``abatch`` calls never interleave. The store keeps
an index of its items (namespace and key to memory id) read once from the memory
(:meth:`~varvemem.Memory.get_all`, one scan of the tenant's knowledge) and kept by its own
writes: items another process puts later are seen by a store made after them. No TTL
(``supports_ttl`` is False): varvemem's lifecycle decides what is forgotten.

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


@dataclass
class _Entry:
    memory_id: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    indexed: bool

    def item(self, namespace: tuple[str, ...], key: str) -> Item:
        return Item(value=dict(self.value), key=key, namespace=namespace,
                    created_at=self.created_at, updated_at=self.updated_at)


Key = tuple[tuple[str, ...], str]


class VarvememStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are varvemem memories (see the module).

    ``memory``: a :class:`varvemem.Memory` or :class:`varvemem.AsyncMemory`. ``tenant``,
    ``agent``: the scope of every item. ``user_at``: which namespace element is the user
    (``None``: none). ``index``: ``{"fields": [...]}``, the value paths search reads (default:
    the whole value); varvemem embeds with its own model, so ``dims`` and ``embed`` are
    refused. ``tags``: more tags for every item's memory.
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
        self._items: dict[Key, _Entry] | None = None

    # -- BaseStore ------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self._amem.run_blocking(self._apply, list(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await self._amem.run(self._apply, list(ops))

    # -- the batch, on the memory's worker ------------------------------------------------------
    def _apply(self, mem: Memory, ops: list[Op]) -> list[Result]:
        for op in ops:
            _check(op)
        items = self._index(mem)
        results: list[Result] = []
        puts: dict[Key, PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(mem, items, op))
            elif isinstance(op, SearchOp):
                results.append(self._search(mem, items, op))
            elif isinstance(op, ListNamespacesOp):
                results.append(_list_namespaces(items, op))
            elif isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
            else:
                raise ValueError(f"unknown operation {type(op).__name__}")
        for (namespace, key), op in puts.items():
            self._put(mem, items, namespace, key, op)
        return results

    def _index(self, mem: Memory) -> dict[Key, _Entry]:
        """namespace and key -> the item's memory, read once from the memory."""
        if self._items is not None:
            return self._items
        items: dict[Key, _Entry] = {}
        after = ""
        while True:
            page = mem.get_all(tenant=self.tenant, types=["knowledge"], include_superseded=True,
                               limit=_PAGE, after=after)
            for rec in page:
                found = _entry(rec.memory_id, rec.metadata)
                if found is None or rec.scope.agent != self.agent:
                    continue
                key, entry = found
                old = items.get(key)
                if old is None or entry.updated_at > old.updated_at:
                    items[key] = entry
            if len(page) < _PAGE:
                break
            after = page[-1].memory_id
        self._items = items
        return items

    def _get(self, mem: Memory, items: dict[Key, _Entry], op: GetOp) -> Item | None:
        key = (tuple(op.namespace), op.key)
        entry = items.get(key)
        if entry is None:
            return None
        try:  # the memory itself, in case it changed or went since
            rec = mem.get(entry.memory_id, tenant=self.tenant)
        except NotFoundError:
            del items[key]
            return None
        found = _entry(rec.memory_id, rec.metadata)
        if found is None or found[0] != key:
            del items[key]
            return None
        items[key] = found[1]
        return found[1].item(*key)

    def _search(self, mem: Memory, items: dict[Key, _Entry], op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)

        def wanted(key: Key, entry: _Entry) -> bool:
            return key[0][: len(prefix)] == prefix and (
                not op.filter or _matches(entry.value, op.filter))

        if not op.query:
            chosen = sorted(((k, e) for k, e in items.items() if wanted(k, e)),
                            key=lambda ke: (-ke[1].updated_at.timestamp(), ke[0]))
            return [_search_item(k, e, None)
                    for k, e in chosen[op.offset: op.offset + op.limit]]
        user = None
        if self.user_at is not None and len(prefix) > self.user_at:
            user = prefix[self.user_at]
        by_id = {e.memory_id: k for k, e in items.items()}
        hits = mem.search(op.query, top_k=max(50, 4 * (op.offset + op.limit)),
                          type="knowledge", tags=[TAG], user=user, agent=self.agent,
                          tenant=self.tenant, include_superseded=True)
        out: list[SearchItem] = []
        for hit in hits:
            key = by_id.get(hit.memory.memory_id)
            if key is None:
                continue
            entry = items[key]
            if entry.indexed and wanted(key, entry):
                out.append(_search_item(key, entry, hit.score))
        return out[op.offset: op.offset + op.limit]

    def _put(self, mem: Memory, items: dict[Key, _Entry], namespace: tuple[str, ...],
             key: str, op: PutOp) -> None:
        entry = items.get((namespace, key))
        if op.value is None:
            if entry is not None:
                with contextlib.suppress(NotFoundError):  # gone already
                    mem.delete(entry.memory_id, reason="langgraph store: deleted",
                               tenant=self.tenant)
                del items[(namespace, key)]
            return
        if getattr(op, "ttl", None) is not None:
            raise NotImplementedError("VarvememStore has no TTL (supports_ttl is False): "
                                      "varvemem's lifecycle decides what is forgotten")
        value = _json_dict(op.value)
        now = _utc(mem.clock())
        indexed = op.index is not False
        paths = self.fields if op.index is None or op.index is False else list(op.index)
        text = _text(value, paths) if indexed else ""
        if not text.strip():
            text, indexed = key, False
        created = entry.created_at if entry is not None else now
        meta = {"namespace": list(namespace), "key": key, "value": value,
                "created_at": created.isoformat(), "updated_at": now.isoformat(),
                "indexed": indexed}
        if entry is not None:
            try:
                mem.update(entry.memory_id, content=text, metadata={META: meta},
                           reason="langgraph store: put", tenant=self.tenant)
                items[(namespace, key)] = _Entry(entry.memory_id, value, created, now, indexed)
                return
            except NotFoundError:  # deleted since: put anew
                pass
        user = None
        if self.user_at is not None and len(namespace) > self.user_at:
            user = namespace[self.user_at]
        res = mem.add(text, type="knowledge", tags=self.tags, user=user, agent=self.agent,
                      session=_session(namespace, key), tenant=self.tenant, tier="long_term",
                      ttl_mode="off", metadata={META: meta})
        items[(namespace, key)] = _Entry(res.memory_id, value, created, now, indexed)


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


def _entry(memory_id: str, metadata: Mapping[str, Any]) -> tuple[Key, _Entry] | None:
    meta = metadata.get(META)
    if not isinstance(meta, Mapping):
        return None
    try:
        namespace = tuple(str(p) for p in meta["namespace"])
        entry = _Entry(memory_id, dict(meta["value"]),
                       _utc(datetime.fromisoformat(meta["created_at"])),
                       _utc(datetime.fromisoformat(meta["updated_at"])),
                       bool(meta.get("indexed", True)))
        return (namespace, str(meta["key"])), entry
    except (KeyError, TypeError, ValueError):
        return None


def _search_item(key: Key, entry: _Entry, score: float | None) -> SearchItem:
    return SearchItem(namespace=key[0], key=key[1], value=dict(entry.value),
                      created_at=entry.created_at, updated_at=entry.updated_at, score=score)


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


def _list_namespaces(items: dict[Key, _Entry], op: ListNamespacesOp) -> list[tuple[str, ...]]:
    namespaces = {ns for ns, _ in items}
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
