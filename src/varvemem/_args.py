"""The arguments every part of the library API resolves the same way: a tenant (``None`` is
the default one), a scope, a memory by id, a live memory. :class:`~varvemem.Memory` and its
namespaces (``mem.qa``, ``mem.inbox``) share one :class:`Args`."""

from __future__ import annotations

from datetime import datetime

from . import _validate
from ._validate import utc
from .engines.reads import ReadEngine
from .errors import ConflictError, ValidationError
from .model import MemoryRecord, Scope, Tier
from .settings import Settings


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
