-- Schema 14: the memories a deleted one had replaced (superseded_by), found when it goes (their
-- successor no longer exists: each points past it or is current again). Only superseded rows.
CREATE INDEX IF NOT EXISTS memories_superseded ON memories (tenant, superseded_by)
    WHERE superseded_by IS NOT NULL;
