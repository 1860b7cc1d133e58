"""The update engine (SPEC UPD-1..7, UPD-9): every write.

The package: ``engine`` (:class:`UpdateEngine`, the add pipeline and the changes in place
together), ``pipeline`` (``add``: prepare, embed, dedup, merge, associate, store), ``edits``
(changes in place: change, edit, feedback, delete, undo a supersession, re-embed, reindex),
``supersession`` (what a new memory supersedes: the learned judge's and the LLM's use),
``claim_rules`` (the offline supersession rules, a row each), ``llm_steps`` (the LLM's
classify, score and supersede) and ``shared`` (the helpers the parts, and the other engines,
write with). This package re-exports them.

:class:`UpdateEngine` is imported on first use (PEP 562): a module that needs only the helpers
(:mod:`.outcome`, :mod:`.ingest`, the other engines) does not import the engine, which
imports them. ``ingest`` (documents) and ``outcome`` (a resolution raises its failures) are
the write path's too.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .shared import ACTOR as ACTOR
from .shared import Orphan as Orphan
from .shared import Prepared as Prepared
from .shared import Turn as Turn
from .shared import content_hash as content_hash
from .shared import created as created
from .shared import embedding_text as embedding_text
from .shared import inherit as inherit
from .shared import jsonable as jsonable
from .shared import new_id as new_id
from .shared import orphans as orphans
from .shared import record_change as record_change
from .shared import reinstate as reinstate
from .shared import replaced_by as replaced_by
from .shared import succession as succession
from .shared import supersede as supersede
from .shared import word_overlap as word_overlap

if TYPE_CHECKING:
    from .engine import UpdateEngine as UpdateEngine

def __getattr__(name: str) -> Any:
    if name != "UpdateEngine":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = import_module(".engine", __name__).UpdateEngine
    globals()[name] = value  # the next look-up does not come here
    return value


__all__ = ["ACTOR", "Orphan", "Prepared", "Turn", "UpdateEngine", "content_hash", "created",
           "embedding_text", "inherit", "jsonable", "new_id", "orphans", "record_change",
           "reinstate", "replaced_by", "succession", "supersede", "word_overlap"]
