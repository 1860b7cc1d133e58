"""The keys that moved, one row each in :data:`MOVED`: an old key still loads, from a file, a
variable or an argument, for one release, with a FutureWarning naming it and its new key.
Setting both to different values fails, naming both."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..model import MemoryType

TYPE = "<type>"


@dataclass(frozen=True)
class Move:
    """``old`` is now ``new`` (dotted keys). With ``<type>`` last in ``old`` the old key is a
    table by memory type, each of its entries moving to ``new`` with ``<type>`` its type."""

    old: str
    new: str


MOVED: tuple[Move, ...] = (
    Move("update.importance_by_type.<type>", "types.<type>.importance"),
    Move("update.tier_by_type.<type>", "types.<type>.tier"),
    Move("update.ttl_by_type.<type>", "types.<type>.ttl"),
    Move("store.sqlite_synchronous", "store.sqlite.synchronous"),
    Move("store.sqlite_page_size", "store.sqlite.page_size"),
    Move("store.busy_timeout_ms", "store.sqlite.busy_timeout_ms"),
    Move("store.pg_schema", "store.postgresql.schema"),
    Move("store.pool_size", "store.postgresql.pool_size"),
    Move("store.auto_migrate", "store.postgresql.auto_migrate"),
    Move("store.pg_erase_rewrite", "store.postgresql.erase_rewrite"),
    Move("store.hnsw_threshold", "store.local.hnsw_threshold"),
    Move("store.exact_filter_limit", "store.local.exact_filter_limit"),
    Move("store.hnsw_expansion_neighbours", "store.local.hnsw_expansion_neighbours"),
    Move("store.vector_oversample", "store.local.oversample"),
    Move("store.vector_dtype", "store.local.dtype"),
    Move("store.graph_file_vectors", "store.local.graph_file_vectors"),
    Move("store.vector_flush_every", "store.local.flush_every"),
    Move("store.vector_close_save_changes", "store.local.close_save_changes"),
    Move("store.vector_token", "store.milvus.token"),
    Move("store.vector_collection", "store.milvus.collection"),
    Move("store.cache_prefix", "store.redis.prefix"),
)

_ABSENT = object()


def moved(data: Any, model: type[BaseModel], source: str = "") -> Any:
    """Settings ``data`` (for ``model``) with every old key of :data:`MOVED` in it moved to its
    new key; ``data`` itself is not changed. ``source`` (a file, the variables) is named in
    the warning."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    where = f" in {source}" if source else ""
    for row in MOVED:
        by_type = row.old.endswith("." + TYPE)
        old = row.old.removesuffix("." + TYPE)
        value = _pop(out, old.split("."))
        if value is _ABSENT or (by_type and value is None):
            continue
        warnings.warn(f"{old} is now {row.new} ({old}{where} is read for one more release)",
                      FutureWarning, stacklevel=2)
        if by_type:
            for name, entry in _types(old, row.new, value).items():
                _put(out, row.new.replace(TYPE, name), entry, f"{old}.{name}", model)
        else:
            _put(out, row.new, value, old, model)
    return out


def _types(old: str, new: str, table: Any) -> dict[str, Any]:
    """An old table by memory type, by type name; unknown types fail naming both keys."""
    if not isinstance(table, dict):
        raise ValueError(f"{old} (now {new}) must be a table by type")
    known = {t.value for t in MemoryType}
    entries = {str(getattr(k, "value", k)): v for k, v in table.items()}
    unknown = sorted(entries.keys() - known)
    if unknown:
        raise ValueError(f"{old} (now {new}): unknown memory type(s) {unknown}; "
                         f"known: {sorted(known)}")
    return entries


def _pop(data: dict[Any, Any], path: list[str]) -> Any:
    """The value at ``path``, removed (the tables on the way are copies); else _ABSENT."""
    *parents, last = path
    node = data
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            return _ABSENT
        node[part] = node = dict(child)
    return node.pop(last, _ABSENT)


def _put(data: dict[Any, Any], new: str, value: Any, old: str, model: type[BaseModel]) -> None:
    """``value`` at ``new`` (the tables on the way are copies), unless ``new`` holds it
    already; a different value there fails, naming both keys."""
    *parents, last = new.split(".")
    node = data
    for n, part in enumerate(parents):
        key = _key(node, part)
        child = node.pop(key, None)
        if isinstance(child, BaseModel):
            child = child.model_dump(by_alias=True, exclude_unset=True)
        elif child is None:
            child = {}
        elif not isinstance(child, dict):
            raise ValueError(f"{old} is now {new}, but {'.'.join(parents[:n + 1])} is not a "
                             "table")
        node[part] = node = dict(child)
    key = _key(node, last)
    if key in node and not _same(node[key], value, _annotation(model, new.split("."))):
        raise ValueError(f"{old} and {new} are both set, to different values ({old} is "
                         f"the old name of {new}): set {new} alone")
    node.setdefault(key, value)


def _key(table: dict[Any, Any], name: str) -> Any:
    """The key of ``table`` that is ``name`` (an enum's value counts), else ``name``."""
    return next((k for k in table if getattr(k, "value", k) == name), name)


def _same(given: Any, value: Any, annotation: Any) -> bool:
    """Whether two values mean the same setting (``"5"`` from a variable is ``5`` in a file)."""
    if given == value:
        return True
    if annotation is None:
        return False
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    try:
        return bool(adapter.validate_python(given) == adapter.validate_python(value))
    except ValidationError:
        return False


def _annotation(model: type[BaseModel], path: list[str]) -> Any:
    """The type of the key at ``path`` in ``model`` (None when there is none)."""
    current: Any = model
    for part in path:
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = next((f for name, f in current.model_fields.items()
                          if (f.alias or name) == part), None)
            if field is None:
                return None
            current = field.annotation
        elif get_origin(current) is dict:
            current = get_args(current)[1]
        else:
            return None
    return current
