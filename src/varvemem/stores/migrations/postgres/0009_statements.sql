-- Schema 9: what the supersession rules parsed of a memory (engines/statements.py), as JSON
-- under a key naming the text and the rules: a candidate or a hit is then not parsed again.
-- NULL for memories written before, or not parsed (the rules parse them when needed).
ALTER TABLE memories ADD COLUMN IF NOT EXISTS statement TEXT;
