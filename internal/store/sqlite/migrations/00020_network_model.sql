-- The network model as MAAS has it: fabrics, VLANs on them, spaces,
-- subnets on VLANs, static routes, a node's interfaces (physical, bond,
-- bridge, VLAN) with their parents, and IP addresses (MAAS's
-- StaticIPAddress). Every existing subnet moves onto fabric-0's untagged
-- VLAN, keeping its id, ranges and settings.

-- +goose Up
CREATE TABLE fabrics (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    class_type  TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT ''
);

CREATE TABLE spaces (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT ''
);

-- vid 0 is the fabric's untagged VLAN. relay_vlan_id names the VLAN whose
-- DHCP server answers this one through a relay.
CREATE TABLE vlans (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    fabric_id      INTEGER NOT NULL REFERENCES fabrics (id) ON DELETE CASCADE,
    vid            INTEGER NOT NULL CHECK (vid BETWEEN 0 AND 4094),
    name           TEXT NOT NULL DEFAULT '',
    mtu            INTEGER NOT NULL DEFAULT 1500,
    dhcp_on        INTEGER NOT NULL DEFAULT 0,
    relay_vlan_id  INTEGER REFERENCES vlans (id) ON DELETE SET NULL,
    space_id       INTEGER REFERENCES spaces (id) ON DELETE SET NULL,
    primary_rack   TEXT NOT NULL DEFAULT '',
    secondary_rack TEXT NOT NULL DEFAULT '',
    description    TEXT NOT NULL DEFAULT '',
    UNIQUE (fabric_id, vid)
);

-- MAAS's default fabric has id 0.
INSERT INTO fabrics (id, name) VALUES (0, 'fabric-0');
INSERT INTO vlans (fabric_id, vid, name) VALUES (0, 0, 'untagged');

-- SQLite cannot add a NOT NULL foreign key to a table, so subnets and
-- ipranges (which refers to subnets) are rebuilt, ids kept.
CREATE TABLE subnets_new (
    id                          INTEGER PRIMARY KEY AUTOINCREMENT,
    name                        TEXT NOT NULL UNIQUE,
    cidr                        TEXT NOT NULL UNIQUE,
    gateway                     TEXT NOT NULL DEFAULT '',
    dns_servers                 TEXT NOT NULL DEFAULT '',
    domain                      TEXT NOT NULL DEFAULT '',
    dhcp                        INTEGER NOT NULL DEFAULT 0,
    lease_seconds               INTEGER NOT NULL DEFAULT 3600,
    vlan_id                     INTEGER NOT NULL REFERENCES vlans (id),
    managed                     INTEGER NOT NULL DEFAULT 1,
    allow_dns                   INTEGER NOT NULL DEFAULT 1,
    allow_proxy                 INTEGER NOT NULL DEFAULT 1,
    rdns_mode                   INTEGER NOT NULL DEFAULT 2,
    active_discovery            INTEGER NOT NULL DEFAULT 0,
    disabled_boot_architectures TEXT NOT NULL DEFAULT '',
    description                 TEXT NOT NULL DEFAULT ''
);
INSERT INTO subnets_new (id, name, cidr, gateway, dns_servers, domain, dhcp, lease_seconds, vlan_id)
    SELECT id, name, cidr, gateway, dns_servers, domain, dhcp, lease_seconds,
           (SELECT id FROM vlans WHERE fabric_id = 0 AND vid = 0)
    FROM subnets;

-- owner is the user who reserved the range (MAAS's "user").
CREATE TABLE ipranges_new (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    subnet_id  INTEGER NOT NULL REFERENCES subnets_new (id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    start_ip   TEXT NOT NULL,
    end_ip     TEXT NOT NULL,
    comment    TEXT NOT NULL DEFAULT '',
    owner      TEXT NOT NULL DEFAULT ''
);
INSERT INTO ipranges_new (id, subnet_id, type, start_ip, end_ip, comment)
    SELECT id, subnet_id, type, start_ip, end_ip, comment FROM ipranges;
DROP TABLE ipranges;
DROP TABLE subnets;
ALTER TABLE subnets_new RENAME TO subnets;
ALTER TABLE ipranges_new RENAME TO ipranges;
CREATE INDEX ipranges_subnet ON ipranges (subnet_id);
CREATE INDEX subnets_vlan ON subnets (vlan_id);

-- A route from the machines on source to the destination subnet via
-- gateway_ip, as MAAS's StaticRoute.
CREATE TABLE static_routes (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    source_id      INTEGER NOT NULL REFERENCES subnets (id) ON DELETE CASCADE,
    destination_id INTEGER NOT NULL REFERENCES subnets (id) ON DELETE CASCADE,
    gateway_ip     TEXT NOT NULL,
    metric         INTEGER NOT NULL DEFAULT 0,
    UNIQUE (source_id, destination_id, gateway_ip)
);

-- Interfaces gain their kind, VLAN, state and parameters. A bond's or a
-- VLAN's MAC is its parent's, so only physical MACs stay unique. params is
-- JSON: mtu, bond_*, bridge_*. tags is comma-separated.
CREATE TABLE interfaces_new (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    machine_id INTEGER NOT NULL REFERENCES machines (id) ON DELETE CASCADE,
    name       TEXT NOT NULL DEFAULT '',
    mac        TEXT NOT NULL DEFAULT '',
    boot       INTEGER NOT NULL DEFAULT 0,
    type       TEXT NOT NULL DEFAULT 'physical',
    vlan_id    INTEGER REFERENCES vlans (id),
    enabled    INTEGER NOT NULL DEFAULT 1,
    params     TEXT NOT NULL DEFAULT '{}',
    tags       TEXT NOT NULL DEFAULT ''
);
INSERT INTO interfaces_new (id, machine_id, name, mac, boot)
    SELECT id, machine_id, name, mac, boot FROM interfaces;
DROP TABLE interfaces;
ALTER TABLE interfaces_new RENAME TO interfaces;
CREATE INDEX interfaces_machine_id ON interfaces (machine_id);
CREATE UNIQUE INDEX interfaces_physical_mac ON interfaces (mac) WHERE type = 'physical';
CREATE INDEX interfaces_vlan ON interfaces (vlan_id);

CREATE TABLE interface_parents (
    child_id  INTEGER NOT NULL REFERENCES interfaces (id) ON DELETE CASCADE,
    parent_id INTEGER NOT NULL REFERENCES interfaces (id) ON DELETE CASCADE,
    PRIMARY KEY (child_id, parent_id)
);
CREATE INDEX interface_parents_parent ON interface_parents (parent_id);

-- MAAS's StaticIPAddress. alloc_type is MAAS's number: AUTO 0, STICKY 1,
-- USER_RESERVED 4, DHCP 5, DISCOVERED 6. ip is NULL for an AUTO link not
-- yet allocated and for DHCP and LINK_UP links; where it is set it is
-- unique, which is what makes allocation race-free across regions.
CREATE TABLE ip_addresses (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    ip           TEXT,
    subnet_id    INTEGER REFERENCES subnets (id),
    alloc_type   INTEGER NOT NULL,
    interface_id INTEGER REFERENCES interfaces (id) ON DELETE CASCADE,
    owner        TEXT NOT NULL DEFAULT '',
    hostname     TEXT NOT NULL DEFAULT '',
    mac          TEXT NOT NULL DEFAULT '',
    created      INTEGER NOT NULL,
    updated      INTEGER NOT NULL
);
CREATE UNIQUE INDEX ip_addresses_ip ON ip_addresses (ip) WHERE ip IS NOT NULL;
CREATE INDEX ip_addresses_subnet ON ip_addresses (subnet_id);
CREATE INDEX ip_addresses_interface ON ip_addresses (interface_id);

-- +goose Down
DROP TABLE ip_addresses;
DROP TABLE interface_parents;
CREATE TABLE interfaces_old (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    machine_id INTEGER NOT NULL REFERENCES machines (id) ON DELETE CASCADE,
    name       TEXT NOT NULL DEFAULT '',
    mac        TEXT NOT NULL UNIQUE,
    boot       INTEGER NOT NULL DEFAULT 0
);
INSERT INTO interfaces_old (id, machine_id, name, mac, boot)
    SELECT id, machine_id, name, mac, boot FROM interfaces WHERE type = 'physical';
DROP TABLE interfaces;
ALTER TABLE interfaces_old RENAME TO interfaces;
CREATE INDEX interfaces_machine_id ON interfaces (machine_id);
DROP TABLE static_routes;
CREATE TABLE subnets_old (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT NOT NULL UNIQUE,
    cidr          TEXT NOT NULL UNIQUE,
    gateway       TEXT NOT NULL DEFAULT '',
    dns_servers   TEXT NOT NULL DEFAULT '',
    domain        TEXT NOT NULL DEFAULT '',
    dhcp          INTEGER NOT NULL DEFAULT 0,
    lease_seconds INTEGER NOT NULL DEFAULT 3600
);
INSERT INTO subnets_old SELECT id, name, cidr, gateway, dns_servers, domain, dhcp, lease_seconds FROM subnets;
CREATE TABLE ipranges_old (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    subnet_id  INTEGER NOT NULL REFERENCES subnets_old (id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    start_ip   TEXT NOT NULL,
    end_ip     TEXT NOT NULL,
    comment    TEXT NOT NULL DEFAULT ''
);
INSERT INTO ipranges_old SELECT id, subnet_id, type, start_ip, end_ip, comment FROM ipranges;
DROP TABLE ipranges;
DROP TABLE subnets;
ALTER TABLE subnets_old RENAME TO subnets;
ALTER TABLE ipranges_old RENAME TO ipranges;
CREATE INDEX ipranges_subnet ON ipranges (subnet_id);
DROP TABLE vlans;
DROP TABLE spaces;
DROP TABLE fabrics;
