-- The serialised power queue and the power monitor's state.

-- +goose Up
-- One row per power command. A command is queued, then running under a
-- lease held by one region process, then done or failed. Equal commands
-- (same machine, same action) that are queued or running are coalesced.
-- bmc_key names the BMC: commands sharing it never run at the same time.
CREATE TABLE power_requests (
    seq           BIGSERIAL PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    system_id     TEXT NOT NULL,
    bmc_key       TEXT NOT NULL,
    action        TEXT NOT NULL,
    state         TEXT NOT NULL,
    requested_by  TEXT NOT NULL DEFAULT '',
    reason        TEXT NOT NULL DEFAULT '',
    created       TIMESTAMPTZ NOT NULL,
    started       TIMESTAMPTZ,
    finished      TIMESTAMPTZ,
    attempts      INTEGER NOT NULL DEFAULT 0,
    lease_owner   TEXT NOT NULL DEFAULT '',
    lease_expires TIMESTAMPTZ,
    result_state  TEXT NOT NULL DEFAULT '',
    error         TEXT NOT NULL DEFAULT '',
    error_kind    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX power_requests_state ON power_requests (state, seq);
CREATE INDEX power_requests_machine ON power_requests (system_id, state);
CREATE INDEX power_requests_bmc ON power_requests (bmc_key, state);

-- Named leases elect one region for fleet-wide loops (the power monitor).
CREATE TABLE leases (
    name    TEXT PRIMARY KEY,
    holder  TEXT NOT NULL,
    expires TIMESTAMPTZ NOT NULL
);

ALTER TABLE machines ADD COLUMN power_watch TEXT NOT NULL DEFAULT '';
ALTER TABLE machines ADD COLUMN drift_policy TEXT NOT NULL DEFAULT '';
ALTER TABLE pools ADD COLUMN drift_policy TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE pools DROP COLUMN drift_policy;
ALTER TABLE machines DROP COLUMN drift_policy;
ALTER TABLE machines DROP COLUMN power_watch;
DROP TABLE leases;
DROP TABLE power_requests;
