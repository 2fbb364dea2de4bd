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
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    is_default  INTEGER NOT NULL DEFAULT 0,
    meta        TEXT NOT NULL,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
);

CREATE TABLE script_versions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    script_id  INTEGER NOT NULL REFERENCES scripts (id) ON DELETE CASCADE,
    data       BLOB NOT NULL,
    comment    TEXT NOT NULL DEFAULT '',
    created    INTEGER NOT NULL
);
CREATE INDEX script_versions_script ON script_versions (script_id, id);

-- A set is one run of scripts of one kind (commissioning, testing) on a
-- machine; its results name the script by name and version, which stay
-- readable after the script changes or goes.
CREATE TABLE script_sets (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    system_id    TEXT NOT NULL REFERENCES machines (system_id) ON DELETE CASCADE,
    result_type  INTEGER NOT NULL,
    created      INTEGER NOT NULL
);
CREATE INDEX script_sets_machine ON script_sets (system_id, id);

CREATE TABLE script_results (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    set_id             INTEGER NOT NULL REFERENCES script_sets (id) ON DELETE CASCADE,
    script_id          INTEGER,
    script_version_id  INTEGER,
    name               TEXT NOT NULL,
    hardware_type      INTEGER NOT NULL DEFAULT 0,
    instance           TEXT NOT NULL DEFAULT '',
    parameters         TEXT NOT NULL DEFAULT '{}',
    status             INTEGER NOT NULL DEFAULT 0,
    exit_status        INTEGER,
    output             BLOB NOT NULL DEFAULT X'',
    stdout             BLOB NOT NULL DEFAULT X'',
    stderr             BLOB NOT NULL DEFAULT X'',
    result             BLOB NOT NULL DEFAULT X'',
    started            INTEGER,
    ended              INTEGER,
    suppressed         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX script_results_set ON script_results (set_id, id);

-- +goose Down
DROP TABLE script_results;
DROP TABLE script_sets;
DROP TABLE script_versions;
DROP TABLE scripts;
ALTER TABLE machines DROP COLUMN script_status;
