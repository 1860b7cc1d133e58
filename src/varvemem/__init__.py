"""varvemem: long-term memory for LLM agents, offline first.

The public API is :class:`Memory` and the model types; everything else is private plumbing.
The names below are imported on first use (PEP 562), so ``import varvemem`` (and a command
line that needs none of them) does not pay for numpy, pydantic or the engines.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._platform import require_posix
from ._version import __version__ as __version__

require_posix()  # one clear error on Windows, before an import deep in the stores fails

if TYPE_CHECKING:
    from .aio import AsyncMemory
    from .api import Memory, upgrade_store
    from .engines.erasure import DeletionReport
    from .engines.faq import AskResult, QaStatus
    from .engines.lifecycle import ConsolidationReport, JobReport, PlannedChange
    from .engines.update.ingest import IngestProgress
    from .errors import (
        ConfigError,
        EmbedderError,
        EmbedderMismatchError,
        LLMError,
        NotFoundError,
        StorageError,
        ValidationError,
        VarvememError,
    )
    from .model import (
        AddResult,
        HistoryEntry,
        IngestReport,
        MemoryChanges,
        MemoryRecord,
        MemoryType,
        Overview,
        Scope,
        ScoreBreakdown,
        SearchHit,
        Tier,
        TTLMode,
        Verdict,
        WhyNot,
    )
    from .settings import Settings


# Each public name and the module (relative to this package) that defines it.
_LAZY: dict[str, str] = {
    "AsyncMemory": ".aio",
    **dict.fromkeys(("Memory", "upgrade_store"), ".api"),
    "AskResult": ".engines.faq",
    "DeletionReport": ".engines.erasure",
    "QaStatus": ".engines.faq",
    "IngestProgress": ".engines.update.ingest",
    **dict.fromkeys(("ConsolidationReport", "JobReport", "PlannedChange"), ".engines.lifecycle"),
    **dict.fromkeys(("ConfigError", "EmbedderError", "EmbedderMismatchError", "LLMError",
                     "NotFoundError", "StorageError", "ValidationError", "VarvememError"),
                    ".errors"),
    **dict.fromkeys(("AddResult", "HistoryEntry", "IngestReport", "MemoryChanges",
                     "MemoryRecord", "MemoryType", "Overview", "Scope", "ScoreBreakdown",
                     "SearchHit", "Tier", "TTLMode", "Verdict", "WhyNot"), ".model"),
    "Settings": ".settings",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # the next look-up does not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AddResult",
    "AskResult",
    "AsyncMemory",
    "ConfigError",
    "ConsolidationReport",
    "DeletionReport",
    "EmbedderError",
    "EmbedderMismatchError",
    "HistoryEntry",
    "IngestProgress",
    "IngestReport",
    "JobReport",
    "LLMError",
    "Memory",
    "MemoryChanges",
    "MemoryRecord",
    "MemoryType",
    "NotFoundError",
    "Overview",
    "PlannedChange",
    "QaStatus",
    "Scope",
    "ScoreBreakdown",
    "SearchHit",
    "Settings",
    "StorageError",
    "TTLMode",
    "Tier",
    "ValidationError",
    "VarvememError",
    "Verdict",
    "WhyNot",
    "upgrade_store",
]
