-- Schema 5: document frequencies per tenant. BM25's IDF of a tenant's search reads its own
-- memories only: with one table for all, a tenant could tell from its scores whether another
-- stored a word, and push another's memories down by storing that word often (issue 18).
-- The empty term counts the tenant's documents. Converted from the rows themselves.
DROP TRIGGER memories_term_df ON memories;
DROP TABLE term_df;
CREATE TABLE term_df (
    tenant text NOT NULL,
    term text COLLATE "C" NOT NULL,
    df bigint NOT NULL,
    PRIMARY KEY (tenant, term)
);
INSERT INTO term_df (tenant, term, df) SELECT tenant, '', count(*) FROM memories GROUP BY tenant;
INSERT INTO term_df (tenant, term, df)
    SELECT m.tenant, t.term, count(*) FROM memories m, unnest(tsvector_to_array(m.fts)) AS t(term)
    WHERE t.term <> '' GROUP BY m.tenant, t.term;

CREATE OR REPLACE FUNCTION varvemem_term_df() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE term_df SET df = df - 1
        WHERE tenant = OLD.tenant AND term = ANY (array_append(tsvector_to_array(OLD.fts), ''));
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO term_df AS d (tenant, term, df)
        SELECT NEW.tenant, t, 1 FROM unnest(array_append(tsvector_to_array(NEW.fts), '')) AS t
        ON CONFLICT (tenant, term) DO UPDATE SET df = d.df + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_term_df AFTER INSERT OR DELETE OR UPDATE OF fts, tenant ON memories
    FOR EACH ROW EXECUTE FUNCTION varvemem_term_df();
