"""The pure renderers of filter clauses (:mod:`varvemem.filters`): as SQL over the SQL stores'
memories table, as a Milvus boolean expression, and as SQL over a pgvector table. No driver is
imported here, so they are tested without the extras."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
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
    "entered": "COALESCE({a}tier_since, {a}created_at)", "valid_from": "{a}valid_from",
    "valid_to": "{a}valid_to", "expires_at": "{a}expires_at",
}
_MEMORIES_TIMES = frozenset({"created_at", "entered", "valid_from", "valid_to", "expires_at"})
_SQL_OPS = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def memories_sql(node: Node, d: Dialect, alias: str = "", hint: bool = False,
                 tags: Callable[[Sequence[str]], Sql] | None = None) -> Sql:
    """A filter node as SQL on the memories table (``alias``, else unqualified) in the dialect
    ``d``. ``hint``: the tenant test carries the dialect's planner hint (where ids, FTS rows or
    tags drive the plan); ``tags``: the store's test that a memory carries one of some tags."""
    def sql(n: Node) -> Sql:
        return memories_sql(n, d, alias, hint, tags)

    if isinstance(node, Not):
        inner, args = sql(node.node)
        return f"NOT {inner}", args
    if isinstance(node, AnyOf | AllOf):
        parts = [sql(n) for n in node.nodes]
        joint = " OR " if isinstance(node, AnyOf) else " AND "
        return f"({joint.join(p[0] for p in parts)})", [x for p in parts for x in p[1]]
    return _clause_sql(node, d, f"{alias}." if alias else "", hint, tags)


def _clause_sql(c: Clause, d: Dialect, a: str, hint: bool,
                tags: Callable[[Sequence[str]], Sql] | None) -> Sql:
    if c.op == "overlaps":  # only tags are lists: the store's table or array
        if tags is None:
            raise ValueError(f"no test of tags given for {c}")
        return tags(c.value)
    if c.field == "valid":  # current: never superseded
        return f"{a}valid_to IS {'' if c.value else 'NOT '}NULL", []
    col = (d.hint if hint and c.field == "tenant" else "") + _MEMORIES_COLUMNS[c.field].format(a=a)
    if c.op == "null":
        return f"{col} IS NULL", []
    if c.op == "in":
        return d.in_(col, c.value)
    arg = d.time(c.value) if c.field in _MEMORIES_TIMES else c.value
    return f"{col} {_SQL_OPS[c.op]} %s", [arg]

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
