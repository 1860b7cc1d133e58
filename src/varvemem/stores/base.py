"""The small interfaces every backend implements: a record store and a vector index.

Engines talk only to these; nothing backend-specific lives outside its own module. They are
written in ``values.py`` (the value types), ``record_roles.py`` (the store of record's roles),
``backend_roles.py`` (the vector index, archive and caches) and ``local_caches.py`` (the
embedded caches), and all imported from here.
"""

from __future__ import annotations

from .backend_roles import (
    ActiveCache,
    AnswerCache,
    AnswerKey,
    Archive,
    IndexFileError,
    MissingIndexFileError,
    VectorIndex,
)
from .local_caches import LocalAnswerCache, StoreActiveCache
from .record_roles import (
    ArchiveRefs,
    ChangeFeed,
    ChangeSubscriber,
    Histories,
    InboxQueue,
    KeyStore,
    Memories,
    RecordStore,
    Sessions,
    StoreTx,
    TextIndex,
)
from .values import (
    ApiKey,
    ArchivedRef,
    Candidate,
    InboxEvent,
    Login,
    Selection,
    SessionInfo,
    TxChanges,
    VectorAttrs,
    VectorChanges,
    prefix_bound,
)

__all__ = [
    "ActiveCache",
    "AnswerCache",
    "AnswerKey",
    "ApiKey",
    "Archive",
    "ArchiveRefs",
    "ArchivedRef",
    "Candidate",
    "ChangeFeed",
    "ChangeSubscriber",
    "Histories",
    "InboxEvent",
    "InboxQueue",
    "IndexFileError",
    "KeyStore",
    "LocalAnswerCache",
    "Login",
    "Memories",
    "MissingIndexFileError",
    "RecordStore",
    "Selection",
    "SessionInfo",
    "Sessions",
    "StoreActiveCache",
    "StoreTx",
    "TextIndex",
    "TxChanges",
    "VectorAttrs",
    "VectorChanges",
    "VectorIndex",
    "prefix_bound",
]
