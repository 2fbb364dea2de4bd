-- +goose Up
-- The DHCP leases each rack holds on subnets it shares with a partner
-- rack (a VLAN's primary and secondary), as the rack last reported them:
-- the region streams each rack its partner's, so the survivor of the two
-- confirms the addresses the other handed out. One row per rack and MAC,
-- as a rack's DHCP keeps one lease per MAC.
CREATE TABLE rack_dhcp_leases (
    rack_id TEXT NOT NULL,
    mac     TEXT NOT NULL,
    ip      TEXT NOT NULL,
    subnet  TEXT NOT NULL,
    expires INTEGER NOT NULL,
    PRIMARY KEY (rack_id, mac)
);
CREATE INDEX rack_dhcp_leases_expires ON rack_dhcp_leases (expires);

-- +goose Down
DROP TABLE rack_dhcp_leases;
