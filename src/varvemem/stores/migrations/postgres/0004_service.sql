-- Schema 4: the service's tables. API keys (a hash of the secret only, each bound to one tenant
-- and a role) and the webhook inbox: a delivery is committed here before it is acknowledged, and
-- workers lease events from it (FOR UPDATE SKIP LOCKED) to turn them into memories, each once.
CREATE TABLE api_keys (
    key_id text PRIMARY KEY,
    tenant text NOT NULL,
    role text NOT NULL,
    name text NOT NULL DEFAULT '',
    secret_hash text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz
);
CREATE INDEX api_keys_tenant ON api_keys (tenant);

CREATE TABLE inbox (
    event_id bigserial PRIMARY KEY,
    tenant text NOT NULL,
    source text NOT NULL,
    kind text NOT NULL,
    delivery text NOT NULL,
    body text NOT NULL,
    headers jsonb NOT NULL DEFAULT '{}',
    received_at timestamptz NOT NULL,
    status text NOT NULL DEFAULT 'pending',
    attempts integer NOT NULL DEFAULT 0,
    worker text,
    lease_until timestamptz,
    processed_at timestamptz,
    error text,
    memory_ids jsonb NOT NULL DEFAULT '[]',
    UNIQUE (tenant, source, delivery)
);
CREATE INDEX inbox_waiting ON inbox (status, event_id) WHERE status IN ('pending', 'processing');
