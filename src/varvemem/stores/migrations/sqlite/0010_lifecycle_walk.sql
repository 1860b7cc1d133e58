-- Schema 10: the lifecycle's selections (re-score, promote, forget: Selection in _sql.py) walk
-- a tenant's memories in id order testing a few bookkeeping columns. Read from the rows, each
-- walk reads every row whole (content, vector: ~2.5 KB); this index holds just those columns
-- (~100 bytes a memory), so a walk reads the index and only the matching rows.
CREATE INDEX IF NOT EXISTS memories_lifecycle ON memories (
    tenant, memory_id, tier, memory_type, importance, expires_at, tier_since, created_at,
    last_retrieved_at, retrieval_count, scored_retrievals, decayed_at, valid_to);
