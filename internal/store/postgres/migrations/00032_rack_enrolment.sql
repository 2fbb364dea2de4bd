-- +goose Up
-- One-time secrets an administrator issues for racks to enrol with: only
-- a hash is kept, and a secret is spent by the first rack that presents
-- it (or lapses at expires).
CREATE TABLE rack_secrets (
    hash       TEXT PRIMARY KEY,
    created_by TEXT NOT NULL,
    created    TIMESTAMPTZ NOT NULL,
    expires    TIMESTAMPTZ NOT NULL,
    used       TIMESTAMPTZ,
    rack_id    TEXT NOT NULL DEFAULT ''
);

-- Each enrolled rack's own credential, by its OAuth token key; the secret
-- is kept as a SHA-256 hash, since the region only ever compares it.
-- Deleting the rack deletes its credentials: its next call is refused.
CREATE TABLE rack_credentials (
    token_key    TEXT PRIMARY KEY,
    consumer_key TEXT NOT NULL,
    secret_hash  TEXT NOT NULL,
    rack_id      TEXT NOT NULL,
    created      TIMESTAMPTZ NOT NULL
);
CREATE INDEX rack_credentials_rack ON rack_credentials (rack_id);

-- Whether a rack enrolled (else it follows the region with a user's key),
-- and the last status it reported: its interfaces, BMC networks and the
-- health of its services, as JSON.
ALTER TABLE racks ADD COLUMN enrolled BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE racks ADD COLUMN report TEXT NOT NULL DEFAULT '';
ALTER TABLE racks ADD COLUMN reported TIMESTAMPTZ;

-- +goose Down
ALTER TABLE racks DROP COLUMN reported;
ALTER TABLE racks DROP COLUMN report;
ALTER TABLE racks DROP COLUMN enrolled;
DROP TABLE rack_credentials;
DROP TABLE rack_secrets;
