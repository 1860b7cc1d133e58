-- Schema 7: counters that stats() and the overview read instead of counting rows. Triggers
-- keep them in the writing transaction; writers are already ordered by the vector_seq row,
-- so the counter rows add no lock order of their own. Built from the rows, so applying it
-- again (a downgraded schema) rebuilds them.
DROP TABLE IF EXISTS memory_counts;
DROP TABLE IF EXISTS history_counts;
DROP TRIGGER IF EXISTS memories_counts ON memories;
DROP TRIGGER IF EXISTS history_counts ON history;
CREATE TABLE memory_counts (
    tenant text NOT NULL,
    tier text NOT NULL,
    memory_type text NOT NULL,
    superseded boolean NOT NULL,
    n bigint NOT NULL,
    PRIMARY KEY (tenant, tier, memory_type, superseded)
);
INSERT INTO memory_counts
    SELECT tenant, tier, memory_type, valid_to IS NOT NULL, count(*) FROM memories
    GROUP BY tenant, tier, memory_type, valid_to IS NOT NULL;

CREATE OR REPLACE FUNCTION varvemem_memory_counts() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.tenant = NEW.tenant AND OLD.tier = NEW.tier
       AND OLD.memory_type = NEW.memory_type
       AND (OLD.valid_to IS NULL) = (NEW.valid_to IS NULL) THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE memory_counts SET n = n - 1
        WHERE tenant = OLD.tenant AND tier = OLD.tier AND memory_type = OLD.memory_type
          AND superseded = (OLD.valid_to IS NOT NULL);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO memory_counts AS c VALUES (NEW.tenant, NEW.tier, NEW.memory_type,
                                               NEW.valid_to IS NOT NULL, 1)
        ON CONFLICT (tenant, tier, memory_type, superseded) DO UPDATE SET n = c.n + 1;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER memories_counts
    AFTER INSERT OR DELETE OR UPDATE OF tenant, tier, memory_type, valid_to ON memories
    FOR EACH ROW EXECUTE FUNCTION varvemem_memory_counts();

CREATE TABLE history_counts (tenant text PRIMARY KEY, n bigint NOT NULL);
INSERT INTO history_counts SELECT tenant, count(*) FROM history GROUP BY tenant;
CREATE OR REPLACE FUNCTION varvemem_history_counts() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE history_counts SET n = n - 1 WHERE tenant = OLD.tenant;
    ELSE
        INSERT INTO history_counts AS c VALUES (NEW.tenant, 1)
        ON CONFLICT (tenant) DO UPDATE SET n = c.n + 1;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER history_counts AFTER INSERT OR DELETE ON history
    FOR EACH ROW EXECUTE FUNCTION varvemem_history_counts();
