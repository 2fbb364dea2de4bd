-- Subnets Anvil serves DHCP on, their address ranges, and DHCP leases.

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

-- One lease per MAC, one MAC per address.
CREATE TABLE dhcp_leases (
    mac       TEXT PRIMARY KEY,
    ip        TEXT NOT NULL UNIQUE,
    hostname  TEXT NOT NULL DEFAULT '',
    expires   INTEGER NOT NULL,
    updated   INTEGER NOT NULL
);

-- +goose Down
DROP TABLE dhcp_leases;
DROP TABLE ipranges;
DROP TABLE subnets;
