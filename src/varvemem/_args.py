"""The arguments every part of the library API resolves the same way: a tenant (``None`` is
the default one), a scope, a memory by id, a live memory. :class:`~varvemem.Memory` and its
namespaces (``mem.qa``, ``mem.inbox``) share one :class:`Args`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from . import _validate
from ._validate import enums_of, utc
from .engines.reads import ReadEngine
from .errors import ConflictError, ValidationError
from .model import MemoryRecord, MemoryType, Scope, SearchFilter, Tier, normalise_tags
from .settings import Settings
from .stores.base import Selection


class Args:
    """Resolves and checks the tenant, scope and memory arguments of the library API."""

    def __init__(self, settings: Settings, reads: ReadEngine) -> None:
        self.settings = settings
        self.reads = reads

    def tenant(self, tenant: str | None) -> str:
        """``None`` means the default tenant; an empty tenant is refused, never defaulted."""
        if tenant is None:
            return self.settings.default_tenant
        if not isinstance(tenant, str) or not tenant.strip():
            raise ValidationError("tenant must be non-empty text")
        _validate.valid_text(tenant, "tenant")
        return tenant

    def scope(self, tenant: str | None, user: str | None, agent: str | None,
              session: str | None) -> Scope:
        for name, value in (("user", user), ("agent", agent), ("session", session)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ValidationError(f"{name} must be non-empty text or None")
            _validate.valid_text(value, name)
        return Scope(tenant=self.tenant(tenant), user=user, agent=agent, session=session)

    def get(self, memory_id: str, tenant: str | None, with_embedding: bool = False,
            as_of: datetime | None = None) -> MemoryRecord:
        """:meth:`varvemem.Memory.get`."""
        return self.reads.get(self.tenant(tenant), _validate.memory_id(memory_id),
                              with_embedding, utc(as_of, "as_of"))

    def live(self, memory_id: str, tenant: str | None) -> MemoryRecord:
        """The memory, which must not be archived (changing one needs a restore first)."""
        rec = self.get(memory_id, tenant)
        if rec.tier is Tier.ARCHIVE:
            raise ConflictError(f"memory {memory_id} is archived; restore it first")
        return rec

    def search_filter(self, tenant: str | None, user: str | None, agent: str | None,
                      session: str | None, type: Any, tier: Any, tags: Sequence[str] | None,
                      since: datetime | None, until: datetime | None, as_of: datetime | None,
                      include_superseded: bool, include_archive: bool) -> SearchFilter:
        """The filter of a search's (and :meth:`varvemem.Memory.why_not`'s) arguments."""
        for name, value in (("user", user), ("agent", agent), ("session", session),
                            ("tags", tags)):
            _validate.valid_text(value, name)
        try:
            return SearchFilter(
                tenant=self.tenant(tenant), user=user, agent=agent, session=session,
                types=enums_of(MemoryType, type, "memory type"), tiers=enums_of(Tier, tier, "tier"),
                tags=normalise_tags(tags) or None, created_after=utc(since, "since"),
                created_before=utc(until, "until"), as_of=utc(as_of, "as_of"),
                include_superseded=include_superseded, include_archive=include_archive)
        except ValueError as exc:
            raise ValidationError(str(exc).splitlines()[0]) from None

    def selection(self, tenant: str | None, user: str | None, types: Any, tiers: Any,
                  include_superseded: bool, limit: int, after: str) -> Selection:
        """The memories :meth:`varvemem.Memory.get_all` pages through."""
        if not 1 <= limit <= 10_000:
            raise ValidationError("limit must be in 1..10000")
        _validate.valid_text(user, "user")
        _validate.valid_text(after, "after")
        return Selection(tenant=self.tenant(tenant), user=user,
                         types=enums_of(MemoryType, types, "type"),
                         tiers=enums_of(Tier, tiers, "tier"), current_only=not include_superseded)
