-- Schema 12: logins, the random tokens that stand for an API key (a hash of the token only):
-- the inspector's sessions and its one-time login links. Kept in the store of record, so every
-- server process of a deployment (server.workers) knows each login, and a logout or an
-- expiry ends it in all of them.
CREATE TABLE IF NOT EXISTS logins (
    token_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    key_id TEXT NOT NULL,
    csrf TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    seen_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS logins_seen ON logins (kind, seen_at);
