-- Schema 8: counters that stats() and the overview read instead of counting rows (6 s at 1M).
-- Triggers keep them in the writing transaction, so they agree with the rows they count on
-- every path that writes (add, update, supersede, archive, erase, purge). Built from the rows,
-- so applying it again (a downgraded schema) rebuilds them.
DROP TRIGGER IF EXISTS memory_counts_insert;
DROP TRIGGER IF EXISTS memory_counts_delete;
DROP TRIGGER IF EXISTS memory_counts_update;
DROP TRIGGER IF EXISTS history_counts_insert;
DROP TRIGGER IF EXISTS history_counts_delete;
DROP TABLE IF EXISTS memory_counts;
DROP TABLE IF EXISTS history_counts;
CREATE TABLE memory_counts (
    tenant TEXT NOT NULL,
    tier TEXT NOT NULL,
    memory_type TEXT NOT NULL,
    superseded INTEGER NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (tenant, tier, memory_type, superseded)
) WITHOUT ROWID;
INSERT INTO memory_counts
    SELECT tenant, tier, memory_type, valid_to IS NOT NULL, COUNT(*) FROM memories
    GROUP BY tenant, tier, memory_type, valid_to IS NOT NULL;

CREATE TRIGGER memory_counts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memory_counts VALUES (NEW.tenant, NEW.tier, NEW.memory_type,
                                      NEW.valid_to IS NOT NULL, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER memory_counts_delete AFTER DELETE ON memories BEGIN
    UPDATE memory_counts SET n = n - 1
        WHERE tenant = OLD.tenant AND tier = OLD.tier AND memory_type = OLD.memory_type
          AND superseded = (OLD.valid_to IS NOT NULL);
END;
CREATE TRIGGER memory_counts_update AFTER UPDATE OF tenant, tier, memory_type, valid_to
    ON memories
    WHEN OLD.tenant IS NOT NEW.tenant OR OLD.tier IS NOT NEW.tier
      OR OLD.memory_type IS NOT NEW.memory_type
      OR (OLD.valid_to IS NULL) <> (NEW.valid_to IS NULL)
BEGIN
    UPDATE memory_counts SET n = n - 1
        WHERE tenant = OLD.tenant AND tier = OLD.tier AND memory_type = OLD.memory_type
          AND superseded = (OLD.valid_to IS NOT NULL);
    INSERT INTO memory_counts VALUES (NEW.tenant, NEW.tier, NEW.memory_type,
                                      NEW.valid_to IS NOT NULL, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TABLE history_counts (tenant TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO history_counts SELECT tenant, COUNT(*) FROM history GROUP BY tenant;
CREATE TRIGGER history_counts_insert AFTER INSERT ON history BEGIN
    INSERT INTO history_counts VALUES (NEW.tenant, 1) ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER history_counts_delete AFTER DELETE ON history BEGIN
    UPDATE history_counts SET n = n - 1 WHERE tenant = OLD.tenant;
END;
