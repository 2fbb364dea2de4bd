-- The network model as MAAS has it: fabrics, VLANs on them, spaces,
-- subnets on VLANs, static routes, a node's interfaces (physical, bond,
-- bridge, VLAN) with their parents, and IP addresses (MAAS's
-- StaticIPAddress). Every existing subnet moves onto fabric-0's untagged
-- VLAN, keeping its id, ranges and settings.

-- +goose Up
CREATE TABLE fabrics (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    class_type  TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT ''
);

CREATE TABLE spaces (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT ''
);

-- vid 0 is the fabric's untagged VLAN. relay_vlan_id names the VLAN whose
-- DHCP server answers this one through a relay.
CREATE TABLE vlans (
    id             BIGSERIAL PRIMARY KEY,
    fabric_id      BIGINT NOT NULL REFERENCES fabrics (id) ON DELETE CASCADE,
    vid            INTEGER NOT NULL CHECK (vid BETWEEN 0 AND 4094),
    name           TEXT NOT NULL DEFAULT '',
    mtu            INTEGER NOT NULL DEFAULT 1500,
    dhcp_on        BOOLEAN NOT NULL DEFAULT FALSE,
    relay_vlan_id  BIGINT REFERENCES vlans (id) ON DELETE SET NULL,
    space_id       BIGINT REFERENCES spaces (id) ON DELETE SET NULL,
    primary_rack   TEXT NOT NULL DEFAULT '',
    secondary_rack TEXT NOT NULL DEFAULT '',
    description    TEXT NOT NULL DEFAULT '',
    UNIQUE (fabric_id, vid)
);

-- MAAS's default fabric has id 0 (the sequence still starts at 1).
INSERT INTO fabrics (id, name) VALUES (0, 'fabric-0');
INSERT INTO vlans (fabric_id, vid, name) VALUES (0, 0, 'untagged');

ALTER TABLE subnets ADD COLUMN vlan_id BIGINT REFERENCES vlans (id);
UPDATE subnets SET vlan_id = (SELECT id FROM vlans WHERE fabric_id = 0 AND vid = 0);
ALTER TABLE subnets ALTER COLUMN vlan_id SET NOT NULL;
ALTER TABLE subnets ADD COLUMN managed BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE subnets ADD COLUMN allow_dns BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE subnets ADD COLUMN allow_proxy BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE subnets ADD COLUMN rdns_mode INTEGER NOT NULL DEFAULT 2;
ALTER TABLE subnets ADD COLUMN active_discovery BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE subnets ADD COLUMN disabled_boot_architectures TEXT NOT NULL DEFAULT '';
ALTER TABLE subnets ADD COLUMN description TEXT NOT NULL DEFAULT '';
CREATE INDEX subnets_vlan ON subnets (vlan_id);

-- owner is the user who reserved the range (MAAS's "user").
ALTER TABLE ipranges ADD COLUMN owner TEXT NOT NULL DEFAULT '';

-- A route from the machines on source to the destination subnet via
-- gateway_ip, as MAAS's StaticRoute.
CREATE TABLE static_routes (
    id             BIGSERIAL PRIMARY KEY,
    source_id      BIGINT NOT NULL REFERENCES subnets (id) ON DELETE CASCADE,
    destination_id BIGINT NOT NULL REFERENCES subnets (id) ON DELETE CASCADE,
    gateway_ip     TEXT NOT NULL,
    metric         INTEGER NOT NULL DEFAULT 0,
    UNIQUE (source_id, destination_id, gateway_ip)
);

-- Interfaces gain their kind, VLAN, state and parameters. A bond's or a
-- VLAN's MAC is its parent's, so only physical MACs stay unique. params is
-- JSON: mtu, bond_*, bridge_*. tags is comma-separated.
ALTER TABLE interfaces DROP CONSTRAINT interfaces_mac_key;
ALTER TABLE interfaces ALTER COLUMN mac SET DEFAULT '';
ALTER TABLE interfaces ADD COLUMN type TEXT NOT NULL DEFAULT 'physical';
ALTER TABLE interfaces ADD COLUMN vlan_id BIGINT REFERENCES vlans (id);
ALTER TABLE interfaces ADD COLUMN enabled BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE interfaces ADD COLUMN params TEXT NOT NULL DEFAULT '{}';
ALTER TABLE interfaces ADD COLUMN tags TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX interfaces_physical_mac ON interfaces (mac) WHERE type = 'physical';
CREATE INDEX interfaces_vlan ON interfaces (vlan_id);

CREATE TABLE interface_parents (
    child_id  BIGINT NOT NULL REFERENCES interfaces (id) ON DELETE CASCADE,
    parent_id BIGINT NOT NULL REFERENCES interfaces (id) ON DELETE CASCADE,
    PRIMARY KEY (child_id, parent_id)
);
CREATE INDEX interface_parents_parent ON interface_parents (parent_id);

-- MAAS's StaticIPAddress. alloc_type is MAAS's number: AUTO 0, STICKY 1,
-- USER_RESERVED 4, DHCP 5, DISCOVERED 6. ip is NULL for an AUTO link not
-- yet allocated and for DHCP and LINK_UP links; where it is set it is
-- unique, which is what makes allocation race-free across regions.
CREATE TABLE ip_addresses (
    id           BIGSERIAL PRIMARY KEY,
    ip           TEXT,
    subnet_id    BIGINT REFERENCES subnets (id),
    alloc_type   INTEGER NOT NULL,
    interface_id BIGINT REFERENCES interfaces (id) ON DELETE CASCADE,
    owner        TEXT NOT NULL DEFAULT '',
    hostname     TEXT NOT NULL DEFAULT '',
    mac          TEXT NOT NULL DEFAULT '',
    created      TIMESTAMPTZ NOT NULL,
    updated      TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX ip_addresses_ip ON ip_addresses (ip) WHERE ip IS NOT NULL;
CREATE INDEX ip_addresses_subnet ON ip_addresses (subnet_id);
CREATE INDEX ip_addresses_interface ON ip_addresses (interface_id);

-- +goose Down
DROP TABLE ip_addresses;
DROP TABLE interface_parents;
DELETE FROM interfaces WHERE type <> 'physical';
DROP INDEX interfaces_physical_mac;
ALTER TABLE interfaces DROP COLUMN tags, DROP COLUMN params, DROP COLUMN enabled, DROP COLUMN vlan_id, DROP COLUMN type;
ALTER TABLE interfaces ALTER COLUMN mac DROP DEFAULT;
ALTER TABLE interfaces ADD CONSTRAINT interfaces_mac_key UNIQUE (mac);
DROP TABLE static_routes;
ALTER TABLE ipranges DROP COLUMN owner;
ALTER TABLE subnets DROP COLUMN vlan_id, DROP COLUMN managed, DROP COLUMN allow_dns, DROP COLUMN allow_proxy,
    DROP COLUMN rdns_mode, DROP COLUMN active_discovery, DROP COLUMN disabled_boot_architectures, DROP COLUMN description;
DROP TABLE vlans;
DROP TABLE spaces;
DROP TABLE fabrics;
