-- varvemem on PostgreSQL, schema 1: the same tables as the embedded store's schema 4, in the
-- schema named by store.postgresql.schema (the search path is set to it). Times are timestamptz.
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO meta (key, value) VALUES ('vector_seq', '0');

CREATE TABLE memories (
    row_id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,  -- insertion order
    memory_id text COLLATE "C" PRIMARY KEY,  -- ordered bytewise, as in SQLite
    tenant text NOT NULL,
    user_id text,
    agent_id text,
    session_id text,
    memory_type text NOT NULL,
    tier text NOT NULL,
    content text NOT NULL,
    content_hash text NOT NULL,
    source text NOT NULL,
    source_reliability double precision NOT NULL,
    importance double precision NOT NULL,
    tags text[] NOT NULL,
    keywords jsonb NOT NULL,
    related jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    last_retrieved_at timestamptz,
    retrieval_count integer NOT NULL DEFAULT 0,
    expires_at timestamptz,
    ttl_mode text NOT NULL,
    ttl_days double precision,
    valid_from timestamptz NOT NULL,
    valid_to timestamptz,
    superseded_by text,
    question text,
    answer text,
    score double precision,
    metadata jsonb NOT NULL,
    context jsonb NOT NULL,
    tier_since timestamptz,
    scored_retrievals integer NOT NULL DEFAULT 0,
    decayed_at timestamptz,
    embedding bytea,
    vseq bigint NOT NULL DEFAULT 0,
    -- The analysed terms (varvemem.text.index_terms, the embedded store's FTS5 input) as
    -- lexemes: weight A for the content and tags, B for the neighbouring turns and the date.
    -- Built by varvemem, not by a text search configuration: stock PostgreSQL cannot split
    -- Chinese.
    fts tsvector NOT NULL
);
CREATE INDEX memories_scope ON memories (tenant, user_id, agent_id);
CREATE INDEX memories_hash ON memories (tenant, content_hash);
CREATE INDEX memories_source ON memories (tenant, source);
CREATE INDEX memories_vseq ON memories (vseq);
CREATE INDEX memories_session ON memories (tenant, session_id, created_at)
    WHERE session_id IS NOT NULL;
CREATE INDEX memories_tier ON memories (tier, importance);
CREATE INDEX memories_tags ON memories USING gin (tags);
CREATE INDEX memories_fts ON memories USING gin (fts);

CREATE TABLE history (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id text NOT NULL,
    tenant text NOT NULL,
    action text NOT NULL,
    at timestamptz NOT NULL,
    actor text NOT NULL,
    reason text NOT NULL,
    old jsonb,
    new jsonb
);
CREATE INDEX history_memory ON history (tenant, memory_id, id);

-- Vector index catch-up: removals since a sequence number (upserts are memories.vseq).
CREATE TABLE vector_tombstones (memory_id text NOT NULL, seq bigint NOT NULL);
CREATE INDEX vector_tombstones_seq ON vector_tombstones (seq);

CREATE TABLE sessions (
    tenant text NOT NULL,
    session_id text NOT NULL,
    started_at timestamptz NOT NULL,
    last_active_at timestamptz NOT NULL,
    ended_at timestamptz,
    end_reason text,
    PRIMARY KEY (tenant, session_id)
);
CREATE INDEX sessions_open ON sessions (last_active_at) WHERE ended_at IS NULL;

CREATE TABLE archived (
    memory_id text PRIMARY KEY,
    tenant text NOT NULL,
    object text NOT NULL,
    from_tier text NOT NULL,
    archived_at timestamptz NOT NULL
);
CREATE INDEX archived_tenant ON archived (tenant, object);
