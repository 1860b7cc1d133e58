"""Filters as data: a :class:`~varvemem.model.VectorFilter`, a
:class:`~varvemem.model.SearchFilter` or a lifecycle :class:`Selection` turned into clauses that
each backend renders.

A clause is ``(field, op, value)`` over one of :data:`FIELDS`; a filter is a tuple of nodes
that must all hold, a node being a clause or an :class:`AnyOf`, :class:`AllOf` or :class:`Not`
of nodes. Backends render the nodes (a numpy mask, a Milvus expression, SQL); :func:`predicate`
evaluates them on one :class:`~varvemem.model.MemoryRecord` at a time. Which clauses a filter
becomes is written once, in the recipes at the end: what a vector index checks
(:func:`vector_clauses`), what the store of record checks (:func:`search_clauses`), what
the archive search checks (:func:`archive_clauses`), and what a lifecycle job walks
(:func:`selection_clauses`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any, Literal

from .model import MemoryRecord, MemoryType, SearchFilter, Tier, VectorFilter

Op = Literal["eq", "ne", "in", "lt", "ge", "le", "gt", "null", "overlaps"]
"""``eq``/``ne``/``lt``/``le``/``gt``/``ge`` compare with ``value``; ``in``: one of the tuple
``value``; ``null``: the field is missing (``value`` unused); ``overlaps``: the list field
shares an element with the tuple ``value``. As in SQL, a missing (None) field fails every
operator but ``null``."""


@dataclass(frozen=True)
class Clause:
    """One condition on one field: ``field op value``."""

    field: str
    op: Op
    value: Any = None


@dataclass(frozen=True)
class AnyOf:
    """At least one of ``nodes`` holds (SQL ``OR``)."""

    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class AllOf:
    """Every one of ``nodes`` holds (SQL ``AND``)."""

    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    """``node`` does not hold (SQL ``NOT``). Two-valued: a clause on a missing field is false,
    so its negation is true, where SQL's would be unknown; the recipes negate only fields that
    are never missing."""

    node: Node


Node = Clause | AnyOf | AllOf | Not
Clauses = tuple[Node, ...]


def _entered(r: MemoryRecord) -> datetime:
    return r.tier_since or r.created_at


def _last_used(r: MemoryRecord) -> datetime:
    return r.last_retrieved_at or _entered(r)


def _used_or_decayed(r: MemoryRecord) -> datetime:
    used = _last_used(r)
    return used if r.decayed_at is None else max(used, r.decayed_at)


# The fields a clause may name, each read from a record. Enums are compared by their value,
# as every backend stores them; times are datetimes (a backend converts them to its own form).
FIELDS: dict[str, Callable[[MemoryRecord], Any]] = {
    "tenant": lambda r: r.scope.tenant,
    "user": lambda r: r.scope.user,
    "agent": lambda r: r.scope.agent,
    "session": lambda r: r.scope.session,
    "memory_type": lambda r: r.memory_type.value,
    "tier": lambda r: r.tier.value,
    "valid": lambda r: r.valid_to is None,  # current (VectorAttrs.valid): never superseded
    "importance": lambda r: r.importance,
    "tags": lambda r: r.tags,
    "created_at": lambda r: r.created_at,
    "entered": _entered,  # when it entered its tier
    "last_used": _last_used,  # last retrieved, else when it entered its tier
    "used_or_decayed": _used_or_decayed,  # the later of last use and last decay
    "valid_from": lambda r: r.valid_from,
    "valid_to": lambda r: r.valid_to,
    "expires_at": lambda r: r.expires_at,
    "superseded_by": lambda r: r.superseded_by,
    "unscored": lambda r: r.retrieval_count > r.scored_retrievals,  # retrieved since re-scored
    "experience_id": lambda r: r.metadata.get("experience_id"),  # the abstraction it went into
}

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda have, want: bool(have == want),
    "ne": lambda have, want: bool(have != want),
    "in": lambda have, want: have in want,
    "lt": lambda have, want: bool(have < want),
    "le": lambda have, want: bool(have <= want),
    "gt": lambda have, want: bool(have > want),
    "ge": lambda have, want: bool(have >= want),
    "overlaps": lambda have, want: not set(have).isdisjoint(want),
}


_Test = Callable[[MemoryRecord], bool]


def _compile(node: Node) -> _Test:
    """The test of one record that ``node`` stands for, built once: a filter or selection
    checks many records."""
    if isinstance(node, Clause):
        read, want = FIELDS[node.field], node.value
        if node.op == "null":
            return lambda r: read(r) is None
        compare = _COMPARE[node.op]

        def clause(r: MemoryRecord) -> bool:
            have = read(r)
            return have is not None and compare(have, want)
        return clause
    if isinstance(node, Not):
        inner = _compile(node.node)
        return lambda r: not inner(r)
    tests = tuple(_compile(n) for n in node.nodes)
    # Loops rather than any() and all(): no generator made for each record.
    if isinstance(node, AnyOf):
        def either(r: MemoryRecord) -> bool:
            for t in tests:  # noqa: SIM110
                if t(r):
                    return True
            return False
        return either

    def every(r: MemoryRecord) -> bool:
        for t in tests:  # noqa: SIM110
            if not t(r):
                return False
        return True
    return every


def holds(node: Node, record: MemoryRecord) -> bool:
    """Whether ``node`` holds for ``record``."""
    return _compile(node)(record)


def predicate(clauses: Clauses) -> Callable[[MemoryRecord], bool]:
    """A test of one record against every node of ``clauses``."""
    return _compile(AllOf(clauses))


@dataclass(frozen=True)
class Selection:
    """Which memories a lifecycle job works on, across tenants unless ``tenant`` is set.

    Every condition given must hold (:func:`selection_clauses`). Ages count from
    ``tier_since``, else ``created_at``.
    """

    tenant: str | None = None
    tiers: Sequence[Tier] | None = None
    types: Sequence[MemoryType] | None = None
    exclude_types: Sequence[MemoryType] = ()
    current_only: bool = True  # not superseded
    importance_above: float | None = None
    importance_below: float | None = None
    in_tier_before: datetime | None = None  # entered its tier before this
    idle_before: datetime | None = None  # last retrieved (else entered its tier) before this
    expired_at: datetime | None = None  # expires_at at or before this
    unscored_retrievals: bool = False  # retrieved since re-scoring last credited it
    decay_due_before: datetime | None = None  # neither used nor decayed since this
    not_abstracted: bool = False  # no ``experience_id`` in its metadata yet
    session: tuple[str, str] | None = None  # (tenant, session id)
    user: str | None = None  # the memories of one user (with ``tenant``)
    superseded_by: Sequence[str] | None = None  # replaced by one of these (with ``tenant``)
    # And at least one of these holds (when given): several jobs' criteria in one walk.
    any_of: Sequence[Selection] = ()

    @cached_property
    def _test(self) -> Callable[[MemoryRecord], bool]:  # built once, for the many records
        return predicate(selection_clauses(self))

    def matches(self, r: MemoryRecord) -> bool:
        """Whether ``r`` is selected: its clauses (:func:`selection_clauses`) read in Python,
        as the stores' SQL reads them; for a record in memory (a dry run's planned state,
        ``engines/lifecycle``)."""
        return self._test(r)


# -- the pieces of a filter ------------------------------------------------------------------
def _scope(f: VectorFilter) -> Clauses:
    return (Clause("tenant", "eq", f.tenant),
            *(Clause(name, "eq", value) for name, value in (
                ("user", f.user), ("agent", f.agent), ("session", f.session))
              if value is not None))


def _types(f: VectorFilter) -> Clauses:
    return (Clause("memory_type", "in", tuple(t.value for t in f.types)),) if f.types else ()


def _tiers(f: VectorFilter) -> Clauses:
    if f.tiers:
        return (Clause("tier", "in", tuple(t.value for t in f.tiers)),)
    return () if f.include_archive else (Clause("tier", "ne", Tier.ARCHIVE.value),)


def _current(f: VectorFilter) -> Clauses:
    return () if f.include_superseded else (Clause("valid", "eq", True),)


def _tier_limits(f: SearchFilter) -> Clauses:
    out: list[Node] = []
    for lim in f.tier_limits:
        # Not of this tier, or important and recent enough: NOT (tier AND (low OR old)).
        short = [Clause("importance", "lt", lim.min_importance)]
        if lim.since is not None:
            short.append(Clause("entered", "lt", lim.since))
        out.append(Not(AllOf((Clause("tier", "eq", lim.tier.value), AnyOf(tuple(short))))))
    return tuple(out)


def _tags(f: SearchFilter) -> Clauses:
    return (Clause("tags", "overlaps", tuple(f.tags)),) if f.tags else ()


def _created(f: SearchFilter) -> Clauses:
    return tuple(c for c in (
        Clause("created_at", "ge", f.created_after) if f.created_after is not None else None,
        Clause("created_at", "lt", f.created_before) if f.created_before is not None else None,
    ) if c is not None)


def _valid_at(f: SearchFilter, now: datetime) -> Clauses:
    when = f.as_of or now
    # Never a memory before it exists: at ``as_of``, else at ``now`` (a replayed clock).
    out: list[Node] = [Clause("valid_from", "le", when)]
    if not f.include_superseded:
        out.append(AnyOf((Clause("valid_to", "null"), Clause("valid_to", "gt", when))))
    return tuple(out)


def _unexpired(f: SearchFilter, now: datetime) -> Clauses:
    if f.include_expired:
        return ()
    when = f.as_of or now
    return (AnyOf((Clause("expires_at", "null"), Clause("expires_at", "gt", when))),)


# -- the recipes -----------------------------------------------------------------------------
def vector_clauses(f: VectorFilter) -> Clauses:
    """What a vector index checks: scope, current only, types, tiers (archive left out).

    Only ``eq``, ``ne`` and ``in`` clauses on ``tenant``, ``user``, ``agent``, ``session``,
    ``memory_type``, ``tier`` and ``valid`` (the fields of VectorAttrs)."""
    return (*_scope(f), *_current(f), *_types(f), *_tiers(f))


def search_rules(f: SearchFilter, now: datetime, archive: bool = False
                 ) -> list[tuple[str, Clauses]]:
    """The clauses of :func:`search_clauses` (``archive``: of :func:`archive_clauses`) named by
    the rule each comes from: ``tenant``, ``user``, ``agent``, ``session``, ``type``, ``tier``,
    ``tier_rules``, ``tags``, ``since``, ``until``, ``valid_from``, ``superseded``,
    ``expired``. What explains a miss (``engines/explain.py``) reads them, so it names the very
    clause the store applied."""
    scope = _scope(f)
    valid = _valid_at(f, now)
    created = _created(f)
    rules: list[tuple[str, Clauses]] = [("tenant", scope[:1]),
                                        *((c.field, (c,)) for c in scope[1:]
                                          if isinstance(c, Clause)),
                                        ("type", _types(f))]
    if not archive:
        rules += [("tier", _tiers(f)), ("tier_rules", _tier_limits(f))]
    rules += [("tags", _tags(f)),
              ("since", tuple(c for c in created if isinstance(c, Clause) and c.op == "ge")),
              ("until", tuple(c for c in created if isinstance(c, Clause) and c.op == "lt")),
              ("valid_from", valid[:1]), ("superseded", valid[1:])]
    if not archive:
        rules.append(("expired", _unexpired(f, now)))
    return [(name, clauses) for name, clauses in rules if clauses]


def search_clauses(f: SearchFilter, now: datetime) -> Clauses:
    """What the store of record checks at ``now`` (``RecordStore.filter``): scope, types,
    tiers, the tiers' rules, tags, creation time, validity and expiry at ``as_of`` (else
    ``now``)."""
    return tuple(c for _, clauses in search_rules(f, now) for c in clauses)


def archive_clauses(f: SearchFilter, now: datetime) -> Clauses:
    """What the archive search checks of an archived record: scope, types, tags, creation time
    and validity (its tier is ``archive``; neither tiers, their rules nor expiry apply)."""
    return tuple(c for _, clauses in search_rules(f, now, archive=True) for c in clauses)


def selection_clauses(sel: Selection) -> Clauses:
    """What a lifecycle :class:`Selection` checks, in the order the SQL stores test it. An empty
    ``tiers``, ``types`` or ``superseded_by`` selects nothing; an empty ``exclude_types``
    excludes nothing."""
    def values(items: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(getattr(v, "value", v) for v in items)

    out: list[Node] = []
    if sel.tenant is not None:
        out.append(Clause("tenant", "eq", sel.tenant))
    if sel.tiers is not None:
        out.append(Clause("tier", "in", values(sel.tiers)))
    if sel.types is not None:
        out.append(Clause("memory_type", "in", values(sel.types)))
    if sel.exclude_types:
        out.append(Not(Clause("memory_type", "in", values(sel.exclude_types))))
    if sel.current_only:
        out.append(Clause("valid", "eq", True))
    limits: tuple[tuple[str, Op, Any], ...] = (
        ("importance", "gt", sel.importance_above),
        ("importance", "lt", sel.importance_below),
        ("entered", "lt", sel.in_tier_before),
        ("last_used", "lt", sel.idle_before),
        ("expires_at", "le", sel.expired_at),
        ("unscored", "eq", True if sel.unscored_retrievals else None),
        ("used_or_decayed", "lt", sel.decay_due_before))
    out += [Clause(field, op, value) for field, op, value in limits if value is not None]
    if sel.not_abstracted:
        out.append(Clause("experience_id", "null"))
    if sel.session is not None:
        out += [Clause("tenant", "eq", sel.session[0]), Clause("session", "eq", sel.session[1])]
    if sel.user is not None:
        out.append(Clause("user", "eq", sel.user))
    if sel.superseded_by is not None:
        out.append(Clause("superseded_by", "in", tuple(sel.superseded_by)))
    if sel.any_of:
        out.append(AnyOf(tuple(AllOf(selection_clauses(s)) for s in sel.any_of)))
    return tuple(out)


def vector_part(f: SearchFilter) -> VectorFilter:
    """The part of ``f`` a vector index can check. The index knows only "valid now", so a
    point-in-time query (``as_of``) asks it for superseded memories too and leaves validity to
    the store."""
    return VectorFilter(tenant=f.tenant, user=f.user, agent=f.agent, session=f.session,
                        types=f.types, tiers=f.tiers,
                        include_superseded=f.include_superseded or f.as_of is not None,
                        include_archive=f.include_archive)

