-- Schema 3: document frequencies of the full-text terms, so that a query can leave out terms
-- that most memories contain (retrieval.keyword_max_docs): they cost the most and rank the least.
CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab (memories_fts, 'row');
