"""The pure renderers of the vector backends' filters: a filter's clauses
(:func:`varvemem.filters.vector_clauses`) as a Milvus boolean expression or as SQL over a
pgvector table. No driver is imported here, so they are tested without the extras."""

from __future__ import annotations

import json
from typing import Any

from ..filters import AllOf, AnyOf, Node, Not

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
