-- Subnets Anvil serves DHCP on, their address ranges, and unknown MACs seen.

-- +goose Up
CREATE TABLE subnets (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT NOT NULL UNIQUE,
    cidr          TEXT NOT NULL UNIQUE,
    gateway       TEXT NOT NULL DEFAULT '',
    dns_servers   TEXT NOT NULL DEFAULT '',
    domain        TEXT NOT NULL DEFAULT '',
    dhcp          INTEGER NOT NULL DEFAULT 0,
    lease_seconds INTEGER NOT NULL DEFAULT 3600
);

-- type is "dynamic" (handed out by DHCP) or "reserved" (never handed out).
CREATE TABLE ipranges (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    subnet_id  INTEGER NOT NULL REFERENCES subnets (id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    start_ip   TEXT NOT NULL,
    end_ip     TEXT NOT NULL,
    comment    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX ipranges_subnet ON ipranges (subnet_id);

-- MACs that asked to boot or for an address and belong to no machine, as
-- MAAS's network discovery lists them.
CREATE TABLE discoveries (
    mac        TEXT PRIMARY KEY,
    ip         TEXT NOT NULL DEFAULT '',
    first_seen INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL,
    seen       INTEGER NOT NULL DEFAULT 1,
    last_what  TEXT NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE discoveries;
DROP TABLE ipranges;
DROP TABLE subnets;
