-- Schema 9: one type of a tenant's memories in id order (the Q&A pairs of `qa.report`, the
-- lifecycle's type-scoped selections) as an index range, not a scan of the whole tenant.
CREATE INDEX IF NOT EXISTS memories_kind ON memories (tenant, memory_type, memory_id);
