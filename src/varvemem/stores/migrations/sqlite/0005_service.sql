-- Schema 5: the service's tables. API keys (a hash of the secret only, each bound to one tenant
-- and a role) and the webhook inbox: a delivery is committed here before it is acknowledged, and
-- workers lease events from it to turn them into memories, each exactly once.
CREATE TABLE api_keys (
    key_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    role TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    secret_hash TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL,
    revoked_at REAL
);
CREATE INDEX api_keys_tenant ON api_keys (tenant);

CREATE TABLE inbox (
    event_id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    delivery TEXT NOT NULL,
    body TEXT NOT NULL,
    headers TEXT NOT NULL DEFAULT '{}',
    received_at REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    worker TEXT,
    lease_until REAL,
    processed_at REAL,
    error TEXT,
    memory_ids TEXT NOT NULL DEFAULT '[]',
    UNIQUE (tenant, source, delivery)
);
CREATE INDEX inbox_waiting ON inbox (status, event_id) WHERE status IN ('pending', 'processing');
