"""varvemem: long-term memory for LLM agents, offline first.

The public API is :class:`Memory` and the model types; everything else is private plumbing.
"""

from .aio import AsyncMemory
from .api import AskResult, Memory, upgrade_store
from .engines.erasure import DeletionReport
from .engines.faq import QaStatus
from .engines.ingest import IngestProgress
from .engines.lifecycle import ConsolidationReport, JobReport, PlannedChange
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

__version__ = "0.1.0"

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
