-- Schema 6: one full-text index per tenant. FTS5's bm25() reads the table's document count,
-- average length and document frequencies; with one table for all tenants a tenant could tell
-- from its scores whether another stored a word, and push another's memories down by storing
-- that word often (issue 18). Each tenant's memories now go to a table of its own,
-- memories_fts_<n> with its fts5vocab table memories_fts_<n>_vocab, made on its first write;
-- this table maps tenants to their n (never reused, so an n always names the same tenant).
CREATE TABLE fts_tenants (tenant TEXT PRIMARY KEY, n INTEGER NOT NULL UNIQUE);
DROP TABLE memories_fts_vocab;
DROP TABLE memories_fts;
-- The store refills the tenants' tables from the records when it opens (as for a new analyser).
DELETE FROM meta WHERE key = 'fts_version';
