-- Schema 2: contextual keys. A memory keeps the neighbouring turns it is indexed with, and the
-- full-text index gets a second column for them (ranked with retrieval.context_weight).
-- The index is derived data: the store refills it from the records (analyser INDEX_VERSION).
ALTER TABLE memories ADD COLUMN context TEXT NOT NULL DEFAULT '{}';
DROP TABLE memories_fts;
CREATE VIRTUAL TABLE memories_fts USING fts5 (terms, context, tokenize = 'unicode61 remove_diacritics 0');
DELETE FROM meta WHERE key = 'fts_version';
CREATE INDEX memories_session ON memories (tenant, session_id, created_at) WHERE session_id IS NOT NULL;
