"""The update engine (SPEC UPD-1..7, UPD-9): validate, classify, score, embed, dedup, supersede,
associate and store, one batch per transaction.

Steps that could use an LLM (classify, score, supersede) have a deterministic local default in
:mod:`..rules`; every :class:`AddResult` says which path each step took. The engine is the add
pipeline (:mod:`.pipeline`) and the changes in place (:mod:`.edits`); what a draft supersedes is
its :class:`.supersession.Supersession`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ...embeddings import Embedder
from ...llm import ChatClient
from ...model import IngestReport, Scope
from .. import claims
from .. import judge as judging
from .edits import EditsInPlace
from .pipeline import AddPipeline
from .shared import ACTOR, WriteConfig, WriteStores
from .supersession import Supersession

if TYPE_CHECKING:
    from .ingest import IngestProgress


class UpdateEngine(AddPipeline, EditsInPlace):
    """The write path. ``embedder`` is a callable so the model loads only when first needed."""

    def __init__(self, settings: WriteConfig, stores: WriteStores, embedder: Callable[[], Embedder],
                 clock: Callable[[], datetime], llm: ChatClient | None = None) -> None:
        super().__init__(settings, stores, embedder, clock, llm)
        self.supersession = Supersession(settings, stores, embedder, clock, llm)

    def lexicon(self) -> claims.Lexicon:
        """The claim rules' attribute words (``update.attribute_words`` on the built-in ones)."""
        return self.supersession.lexicon()

    def judge(self) -> judging.Choice:
        """The learned judge the write path uses (``update.judge``), or why none."""
        return self.supersession.judge()

    # -- documents ----------------------------------------------------------------------------
    # Read a batch at a time, committed as it goes and resumable: engines/update/ingest.py.
    def ingest_text(self, text: str, source: str, scope: Scope, tags: list[str],
                    report: IngestReport, actor: str = ACTOR,
                    progress: Callable[[IngestProgress], None] | None = None) -> None:
        """Store a document's chunks; on re-ingestion keep unchanged chunks, add new ones and
        invalidate the rest (kept in history, no longer served)."""
        from .ingest import DocumentIngest

        DocumentIngest(self).ingest_text(text, source, scope, tags, report, actor, progress)

    def ingest_paths(self, paths: Sequence[Path], scope: Scope, tags: list[str],
                     progress: Callable[[IngestProgress], None] | None = None) -> IngestReport:
        """Ingest files and folders (see :meth:`..ingest.DocumentIngest.ingest_paths`)."""
        from .ingest import DocumentIngest

        return DocumentIngest(self).ingest_paths(paths, scope, tags, progress)
