-- varvemem embedded store, schema 1. Times are UTC epoch seconds (REAL).
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta (key, value) VALUES ('vector_seq', '0');

CREATE TABLE memories (
    rowid INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    user_id TEXT,
    agent_id TEXT,
    session_id TEXT,
    memory_type TEXT NOT NULL,
    tier TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    source TEXT NOT NULL,
    source_reliability REAL NOT NULL,
    importance REAL NOT NULL,
    tags TEXT NOT NULL,
    keywords TEXT NOT NULL,
    related TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    last_retrieved_at REAL,
    retrieval_count INTEGER NOT NULL DEFAULT 0,
    expires_at REAL,
    ttl_mode TEXT NOT NULL,
    ttl_days REAL,
    valid_from REAL NOT NULL,
    valid_to REAL,
    superseded_by TEXT,
    question TEXT,
    answer TEXT,
    score REAL,
    metadata TEXT NOT NULL,
    embedding BLOB,
    vseq INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX memories_scope ON memories (tenant, user_id, agent_id);
CREATE INDEX memories_hash ON memories (tenant, content_hash);
CREATE INDEX memories_source ON memories (tenant, source);
CREATE INDEX memories_vseq ON memories (vseq);

CREATE TABLE memory_tags (
    tag TEXT NOT NULL,
    tenant TEXT NOT NULL,
    memory_rowid INTEGER NOT NULL,
    PRIMARY KEY (tag, tenant, memory_rowid)
) WITHOUT ROWID;
CREATE INDEX memory_tags_row ON memory_tags (memory_rowid);

-- The analysed text (see varvemem.text.analyse), one row per memory, rowid = memories.rowid.
CREATE VIRTUAL TABLE memories_fts USING fts5 (terms, tokenize = 'unicode61 remove_diacritics 0');

CREATE TABLE history (
    id INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    action TEXT NOT NULL,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    reason TEXT NOT NULL,
    old TEXT,
    new TEXT
);
CREATE INDEX history_memory ON history (tenant, memory_id, id);

-- Vector index catch-up: removals since a sequence number (upserts are memories.vseq).
CREATE TABLE vector_tombstones (memory_id TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX vector_tombstones_seq ON vector_tombstones (seq);
