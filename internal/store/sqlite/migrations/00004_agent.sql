-- The ephemeral environment: who a BMC belongs to, the one-time enrolment
-- secret a netbooting phase hands the machine's boot, the loop guard, the
-- commissioning inventory, per-machine tokens and uploaded results.

-- +goose Up
-- bmc_identity is "type|host|port|system" of the machine's BMC: two
-- machines can never claim the same system behind the same BMC.
ALTER TABLE machines ADD COLUMN bmc_identity TEXT NOT NULL DEFAULT '';
ALTER TABLE machines ADD COLUMN enrol_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE machines ADD COLUMN wrong_boots INTEGER NOT NULL DEFAULT 0;
ALTER TABLE machines ADD COLUMN inventory TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX machines_bmc_identity ON machines (bmc_identity) WHERE bmc_identity <> '';
CREATE INDEX machines_hardware_uuid ON machines (hardware_uuid) WHERE hardware_uuid <> '';

-- A machine's own metadata credentials: valid only while the machine is
-- in the status they were issued for. The secret is kept as its SHA-256.
CREATE TABLE machine_tokens (
    token_key    TEXT PRIMARY KEY,
    consumer_key TEXT NOT NULL,
    secret_hash  TEXT NOT NULL,
    system_id    TEXT NOT NULL REFERENCES machines (system_id) ON DELETE CASCADE,
    status       INTEGER NOT NULL,
    created      INTEGER NOT NULL
);
CREATE INDEX machine_tokens_machine ON machine_tokens (system_id);

-- Files the environment uploaded with its signals, the latest per name.
CREATE TABLE machine_results (
    system_id TEXT NOT NULL REFERENCES machines (system_id) ON DELETE CASCADE,
    name      TEXT NOT NULL,
    data      BLOB NOT NULL,
    created   INTEGER NOT NULL,
    PRIMARY KEY (system_id, name)
);

-- +goose Down
DROP TABLE machine_results;
DROP TABLE machine_tokens;
DROP INDEX machines_hardware_uuid;
DROP INDEX machines_bmc_identity;
ALTER TABLE machines DROP COLUMN inventory;
ALTER TABLE machines DROP COLUMN wrong_boots;
ALTER TABLE machines DROP COLUMN enrol_secret;
ALTER TABLE machines DROP COLUMN bmc_identity;
