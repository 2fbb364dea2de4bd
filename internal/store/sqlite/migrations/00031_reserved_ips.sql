-- +goose Up
-- Reserved IPs, as MAAS 3.6's: an address kept for a MAC on a subnet until
-- an administrator deletes it. The rack's DHCP answers the MAC with it, and
-- an AUTO link of the interface with that MAC gets it; nobody else does.
CREATE TABLE reserved_ips (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    subnet_id INTEGER NOT NULL REFERENCES subnets (id) ON DELETE CASCADE,
    ip        TEXT NOT NULL UNIQUE,
    mac       TEXT NOT NULL,
    comment   TEXT NOT NULL DEFAULT '',
    created   INTEGER NOT NULL,
    updated   INTEGER NOT NULL,
    UNIQUE (mac, subnet_id)
);

-- +goose Down
DROP TABLE reserved_ips;
