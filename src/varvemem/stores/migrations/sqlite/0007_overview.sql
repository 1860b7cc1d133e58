-- Schema 7: what the overview reads (Memory.overview): memories by creation day and the latest
-- created, each an index range of one tenant; the latest history entries of some actions.
CREATE INDEX IF NOT EXISTS memories_created ON memories (tenant, created_at);
CREATE INDEX IF NOT EXISTS history_recent ON history (tenant, action, id);
