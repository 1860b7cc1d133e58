-- Schema 10: a statement is stored compressed (engines/statements.py): bytes, not JSON text.
-- The JSON ones are dropped: like any stale statement, each is parsed again and written back by
-- the first add that reads it.
ALTER TABLE memories ALTER COLUMN statement TYPE BYTEA USING NULL;
