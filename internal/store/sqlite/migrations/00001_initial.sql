-- Anvil's schema for SQLite. Times are INTEGER Unix nanoseconds, UTC;
-- booleans are INTEGER 0/1. Keep in step with postgres/migrations.

-- +goose Up
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
);

CREATE TABLE users (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    name    TEXT NOT NULL UNIQUE,
    email   TEXT NOT NULL DEFAULT '',
    admin   INTEGER NOT NULL DEFAULT 0,
    created INTEGER NOT NULL
);

-- secret is sealed with the installation's key.
CREATE TABLE tokens (
    token_key    TEXT PRIMARY KEY,
    consumer_key TEXT NOT NULL,
    secret       BLOB NOT NULL,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created      INTEGER NOT NULL
);
CREATE INDEX tokens_user_id ON tokens (user_id);

CREATE TABLE zones (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT ''
);
INSERT INTO zones (name, description) VALUES ('default', 'Default zone');

CREATE TABLE pools (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT ''
);
INSERT INTO pools (name, description) VALUES ('default', 'Default pool');

CREATE TABLE tags (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    comment     TEXT NOT NULL DEFAULT '',
    definition  TEXT NOT NULL DEFAULT '',
    kernel_opts TEXT NOT NULL DEFAULT ''
);

-- power_params is the sealed JSON of the parameter map, NULL when empty.
CREATE TABLE machines (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    system_id       TEXT NOT NULL UNIQUE,
    hostname        TEXT NOT NULL UNIQUE,
    domain          TEXT NOT NULL DEFAULT '',
    architecture    TEXT NOT NULL DEFAULT '',
    description     TEXT NOT NULL DEFAULT '',
    status          INTEGER NOT NULL,
    status_message  TEXT NOT NULL DEFAULT '',
    previous_status INTEGER NOT NULL DEFAULT 0,
    status_expires  INTEGER,
    owner           TEXT NOT NULL DEFAULT '',
    zone_id         INTEGER NOT NULL REFERENCES zones (id),
    pool_id         INTEGER NOT NULL REFERENCES pools (id),
    power_type      TEXT NOT NULL DEFAULT '',
    power_params    BLOB,
    power_state     TEXT NOT NULL DEFAULT '',
    erase_mode      TEXT NOT NULL DEFAULT '',
    cpu_count       INTEGER NOT NULL DEFAULT 0,
    memory          INTEGER NOT NULL DEFAULT 0,
    storage         REAL NOT NULL DEFAULT 0,
    hardware_uuid   TEXT NOT NULL DEFAULT '',
    osystem         TEXT NOT NULL DEFAULT '',
    distro_series   TEXT NOT NULL DEFAULT '',
    netboot         INTEGER NOT NULL DEFAULT 0,
    created         INTEGER NOT NULL,
    updated         INTEGER NOT NULL,
    version         INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX machines_status ON machines (status);
CREATE INDEX machines_owner ON machines (owner);
CREATE INDEX machines_zone_id ON machines (zone_id);
CREATE INDEX machines_pool_id ON machines (pool_id);
CREATE INDEX machines_status_expires ON machines (status_expires) WHERE status_expires IS NOT NULL;

CREATE TABLE interfaces (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    machine_id INTEGER NOT NULL REFERENCES machines (id) ON DELETE CASCADE,
    name       TEXT NOT NULL DEFAULT '',
    mac        TEXT NOT NULL UNIQUE,
    boot       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX interfaces_machine_id ON interfaces (machine_id);

CREATE TABLE machine_tags (
    machine_id INTEGER NOT NULL REFERENCES machines (id) ON DELETE CASCADE,
    tag_id     INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (machine_id, tag_id)
);
CREATE INDEX machine_tags_tag_id ON machine_tags (tag_id);

-- Events outlive their machine, so system_id is a plain column, not a
-- foreign key. level_rank is machine.Level.Rank(), for MinLevel queries.
CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    system_id   TEXT NOT NULL DEFAULT '',
    hostname    TEXT NOT NULL DEFAULT '',
    type        TEXT NOT NULL DEFAULT '',
    level       TEXT NOT NULL DEFAULT '',
    level_rank  INTEGER NOT NULL DEFAULT 0,
    description TEXT NOT NULL DEFAULT '',
    username    TEXT NOT NULL DEFAULT '',
    created     INTEGER NOT NULL
);
CREATE INDEX events_system_id ON events (system_id, id);
CREATE INDEX events_hostname ON events (hostname, id);

-- +goose Down
DROP TABLE events;
DROP TABLE machine_tags;
DROP TABLE interfaces;
DROP TABLE machines;
DROP TABLE tags;
DROP TABLE pools;
DROP TABLE zones;
DROP TABLE tokens;
DROP TABLE users;
DROP TABLE settings;
