-- Schema 2: document frequencies of the full-text terms, for BM25's IDF (PostgreSQL has no
-- BM25 and counting matches per query term cost a GIN scan each). Kept by a trigger on every
-- change of memories.fts, so no code path can forget it; the empty term counts the documents.
CREATE TABLE term_df (term text COLLATE "C" PRIMARY KEY, df bigint NOT NULL);
INSERT INTO term_df (term, df) SELECT '', count(*) FROM memories;
INSERT INTO term_df (term, df) SELECT word, ndoc FROM ts_stat('SELECT fts FROM memories')
    WHERE word <> '';

CREATE FUNCTION varvemem_term_df() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE term_df SET df = df - 1
        WHERE term = ANY (array_append(tsvector_to_array(OLD.fts), ''));
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO term_df AS d (term, df)
        SELECT t, 1 FROM unnest(array_append(tsvector_to_array(NEW.fts), '')) AS t
        ON CONFLICT (term) DO UPDATE SET df = d.df + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_term_df AFTER INSERT OR DELETE OR UPDATE OF fts ON memories
    FOR EACH ROW EXECUTE FUNCTION varvemem_term_df();
