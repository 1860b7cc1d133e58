"""The pure renderers of filter clauses (:mod:`varvemem.filters`): as SQL over the SQL stores'
memories table, as a Milvus boolean expression, and as SQL over a pgvector table. No driver is
imported here, so they are tested without the extras."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..filters import AllOf, AnyOf, Clause, Node, Not

if TYPE_CHECKING:
    from ._sql_dialect import Dialect

Sql = tuple[str, list[Any]]  # a condition and its arguments, in order

# How a field reads on the memories table, ``{a}`` its qualifier ("m." or none).
_MEMORIES_COLUMNS = {
    "tenant": "{a}tenant", "user": "{a}user_id", "agent": "{a}agent_id",
    "session": "{a}session_id", "memory_type": "{a}memory_type", "tier": "{a}tier",
    "importance": "{a}importance", "created_at": "{a}created_at",
    "entered": "COALESCE({a}tier_since, {a}created_at)",
    "last_used": "COALESCE({a}last_retrieved_at, COALESCE({a}tier_since, {a}created_at))",
    "valid_from": "{a}valid_from", "valid_to": "{a}valid_to", "expires_at": "{a}expires_at",
    "superseded_by": "{a}superseded_by",
}
# The fields each dialect spells its own way: (dialect, qualifier) -> SQL.
_DIALECT_COLUMNS: dict[str, Callable[[Dialect, str], str]] = {
    # A NULL time counts as below every time: no decay yet.
    "used_or_decayed": lambda d, a: d.greatest(_MEMORIES_COLUMNS["last_used"].format(a=a),
                                               f"COALESCE({a}decayed_at, {d.null_time})"),
    "experience_id": lambda d, a: d.json_get(f"{a}metadata", "experience_id"),
}
# The true-or-false fields: the conditions for true and for false.
_MEMORIES_FLAGS = {
    "valid": ("{a}valid_to IS NULL", "{a}valid_to IS NOT NULL"),  # current: never superseded
    "unscored": ("{a}retrieval_count > {a}scored_retrievals",
                 "{a}retrieval_count <= {a}scored_retrievals"),
}
_SQL_OPS = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
TagsSql = Callable[[Sequence[str]], Sql]  # the store's test that a memory has one of the tags


def memories_sql(node: Node, d: Dialect, alias: str = "", hint: bool = False,
                 tags: TagsSql | None = None) -> Sql:
    """A filter node as SQL on the memories table (``alias``, else unqualified) in the dialect
    ``d``. ``hint``: the tenant test carries the dialect's planner hint (where ids, FTS rows or
    tags drive the plan); ``tags``: needed for a clause on tags."""
    a = f"{alias}." if alias else ""
    if isinstance(node, Not):
        inner = node.node
        if isinstance(inner, Clause) and inner.op == "in":  # the dialect's own negated list
            return d.in_(_column(inner.field, d, a, hint), inner.value, negate=True)
        sql, args = memories_sql(inner, d, alias, hint, tags)
        return f"NOT {sql}", args
    if isinstance(node, AnyOf | AllOf):
        if not node.nodes:  # as Python's any() and all() of nothing
            return ("(1 = 0)" if isinstance(node, AnyOf) else "(1 = 1)"), []
        parts = [memories_sql(n, d, alias, hint, tags) for n in node.nodes]
        joint = " OR " if isinstance(node, AnyOf) else " AND "
        return f"({joint.join(p[0] for p in parts)})", [x for p in parts for x in p[1]]
    if node.op == "overlaps":  # only tags are lists: the store's table or array
        if tags is None:
            raise ValueError(f"no test of tags given for {node}")
        return tags(node.value)
    if node.field in _MEMORIES_FLAGS:
        if node.op not in ("eq", "ne"):
            raise ValueError(f"a true-or-false field compares only eq or ne: {node}")
        true, false = _MEMORIES_FLAGS[node.field]
        return (true if bool(node.value) == (node.op == "eq") else false).format(a=a), []
    col = _column(node.field, d, a, hint)
    if node.op == "null":
        return f"{col} IS NULL", []
    if node.op == "in":
        return d.in_(col, node.value)
    arg = d.time(node.value) if isinstance(node.value, datetime) else node.value
    return f"{col} {_SQL_OPS[node.op]} %s", [arg]


def memories_where(nodes: Sequence[Node], d: Dialect, alias: str = "", hint: bool = False,
                   tags: TagsSql | None = None) -> Sql:
    """Every one of ``nodes`` (:func:`memories_sql`), joined by ``AND``: a WHERE clause
    without the keyword, empty for no nodes."""
    parts = [memories_sql(n, d, alias, hint, tags) for n in nodes]
    return " AND ".join(p[0] for p in parts), [x for p in parts for x in p[1]]


def _column(field: str, d: Dialect, a: str, hint: bool) -> str:
    if field in _DIALECT_COLUMNS:
        return _DIALECT_COLUMNS[field](d, a)
    return (d.hint if hint and field == "tenant" else "") + _MEMORIES_COLUMNS[field].format(a=a)


# The scalar fields a Milvus collection holds (None is stored as "").
MILVUS_SCALARS = ("tenant", "user", "agent", "session", "memory_type", "tier")


def _milvus_literal(value: Any) -> str:
    """A Milvus filter literal. Milvus Lite has no filter templates, and JSON's string escapes
    are the ones Milvus's expression parser reads."""
    return json.dumps(value, ensure_ascii=False)


_MILVUS_OPS = {"eq": "==", "ne": "!=", "in": "in", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def milvus_expr(node: Node) -> str:
    """A filter node as a Milvus boolean expression (None is stored as "": see :mod:`.milvus`)."""
    if isinstance(node, AnyOf | AllOf):
        joined = (" or " if isinstance(node, AnyOf) else " and ").join(map(milvus_expr, node.nodes))
        return f"({joined})"
    if isinstance(node, Not):
        return f"not ({milvus_expr(node.node)})"
    if (node.field not in MILVUS_SCALARS and node.field != "valid") or node.op not in _MILVUS_OPS:
        raise ValueError(f"a Milvus index cannot filter on {node}")
    value = list(node.value) if node.op == "in" else node.value
    return f"{node.field} {_MILVUS_OPS[node.op]} {_milvus_literal(value)}"


# A filter field's column (the vector table's own, not the store's memories table).
PGVECTOR_COLUMNS = {"tenant": "tenant", "user": "user_id", "agent": "agent_id",
                    "session": "session_id", "memory_type": "memory_type", "tier": "tier",
                    "valid": "valid"}
_PG_OPS = {"eq": "= %s", "ne": "<> %s", "in": "= ANY(%s)", "lt": "< %s", "le": "<= %s",
           "gt": "> %s", "ge": ">= %s", "null": "IS NULL"}


def pgvector_sql(node: Node, args: list[object]) -> str:
    """A filter node as SQL over the vector table, its parameters appended to ``args``."""
    if isinstance(node, AnyOf | AllOf):
        joined = (" OR " if isinstance(node, AnyOf) else " AND ").join(
            pgvector_sql(n, args) for n in node.nodes)
        return f"({joined})"
    if isinstance(node, Not):
        return f"NOT ({pgvector_sql(node.node, args)})"
    col = PGVECTOR_COLUMNS.get(node.field)
    if col is None or node.op not in _PG_OPS:
        raise ValueError(f"a pgvector index cannot filter on {node}")
    if node.field == "valid" and node.op == "eq":
        return col if node.value else f"NOT {col}"
    if node.op != "null":
        args.append(list(node.value) if node.op == "in" else node.value)
    return f"{col} {_PG_OPS[node.op]}"
