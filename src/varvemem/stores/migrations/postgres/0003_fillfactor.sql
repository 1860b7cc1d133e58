-- Schema 3: room on each page for updates in place. Adds rewrite their neighbours' links and
-- searches their counters; with full pages every such update moved the row and re-inserted
-- all its index entries, the full-text GIN entries included (most of an add's server time).
ALTER TABLE memories SET (fillfactor = 70);
