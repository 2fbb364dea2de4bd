-- Commissioning and testing scripts with their revisions, the script sets
-- a machine ran with each script's result, and the machine's summary.

-- +goose Up
-- script_status is the machine's summary of its newest sets (JSON, empty
-- before any), kept with the machine so that reading machines needs no
-- results.
ALTER TABLE machines ADD COLUMN script_status TEXT NOT NULL DEFAULT '';

-- meta is the script's metadata as JSON (package scripts); the text lives
-- in script_versions, newest last.
CREATE TABLE scripts (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    is_default  BOOLEAN NOT NULL DEFAULT FALSE,
    meta        TEXT NOT NULL,
    created     TIMESTAMPTZ NOT NULL,
    updated     TIMESTAMPTZ NOT NULL
);

CREATE TABLE script_versions (
    id         BIGSERIAL PRIMARY KEY,
    script_id  BIGINT NOT NULL REFERENCES scripts (id) ON DELETE CASCADE,
    data       BYTEA NOT NULL,
    comment    TEXT NOT NULL DEFAULT '',
    created    TIMESTAMPTZ NOT NULL
);
CREATE INDEX script_versions_script ON script_versions (script_id, id);

-- A set is one run of scripts of one kind (commissioning, testing) on a
-- machine; its results name the script by name and version, which stay
-- readable after the script changes or goes.
CREATE TABLE script_sets (
    id           BIGSERIAL PRIMARY KEY,
    system_id    TEXT NOT NULL REFERENCES machines (system_id) ON DELETE CASCADE,
    result_type  INTEGER NOT NULL,
    created      TIMESTAMPTZ NOT NULL
);
CREATE INDEX script_sets_machine ON script_sets (system_id, id);

CREATE TABLE script_results (
    id                 BIGSERIAL PRIMARY KEY,
    set_id             BIGINT NOT NULL REFERENCES script_sets (id) ON DELETE CASCADE,
    script_id          BIGINT,
    script_version_id  BIGINT,
    name               TEXT NOT NULL,
    hardware_type      INTEGER NOT NULL DEFAULT 0,
    instance           TEXT NOT NULL DEFAULT '',
    parameters         TEXT NOT NULL DEFAULT '{}',
    status             INTEGER NOT NULL DEFAULT 0,
    exit_status        INTEGER,
    output             BYTEA NOT NULL DEFAULT '',
    stdout             BYTEA NOT NULL DEFAULT '',
    stderr             BYTEA NOT NULL DEFAULT '',
    result             BYTEA NOT NULL DEFAULT '',
    started            TIMESTAMPTZ,
    ended              TIMESTAMPTZ,
    suppressed         BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX script_results_set ON script_results (set_id, id);

-- +goose Down
DROP TABLE script_results;
DROP TABLE script_sets;
DROP TABLE script_versions;
DROP TABLE scripts;
ALTER TABLE machines DROP COLUMN script_status;
