-- Schema 11: logins, the random tokens that stand for an API key (a hash of the token only):
-- the inspector's sessions and its one-time login links. Kept in the store of record, so every
-- server process of a deployment (server.workers) knows each login, and a logout or an
-- expiry ends it in all of them.
CREATE TABLE IF NOT EXISTS logins (
    token_hash text PRIMARY KEY,
    kind text NOT NULL,
    key_id text NOT NULL,
    csrf text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    seen_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS logins_seen ON logins (kind, seen_at);
