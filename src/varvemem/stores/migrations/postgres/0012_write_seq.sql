-- Schema 12: the change feed of the memories themselves (Memory.changes). wseq is the sequence
-- number of the last transaction that wrote the row (any column, not only what the vector
-- index keeps: that is vseq); a tombstone names its tenant. 0 and NULL for what was written
-- before: older than any position the feed can have handed out.
ALTER TABLE memories ADD COLUMN IF NOT EXISTS wseq bigint NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS memories_wseq ON memories (tenant, wseq);
ALTER TABLE vector_tombstones ADD COLUMN IF NOT EXISTS tenant text;
