-- Schema 4: the tiers' lifecycle. When a memory entered its tier (retention counts from there),
-- how many of its retrievals re-scoring has credited, and when it last decayed.
ALTER TABLE memories ADD COLUMN tier_since REAL;
ALTER TABLE memories ADD COLUMN scored_retrievals INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN decayed_at REAL;
CREATE INDEX memories_tier ON memories (tier, importance);

-- TIER-1 sessions: open until closed or idle (lifecycle.session_idle_minutes).
CREATE TABLE sessions (
    tenant TEXT NOT NULL,
    session_id TEXT NOT NULL,
    started_at REAL NOT NULL,
    last_active_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    PRIMARY KEY (tenant, session_id)
) WITHOUT ROWID;
CREATE INDEX sessions_open ON sessions (last_active_at) WHERE ended_at IS NULL;

-- TIER-5: where each archived memory's full record lies (an object of the archive). The live
-- tables no longer hold it; its history stays.
CREATE TABLE archived (
    memory_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    object TEXT NOT NULL,
    from_tier TEXT NOT NULL,
    archived_at REAL NOT NULL
);
CREATE INDEX archived_tenant ON archived (tenant, object);
