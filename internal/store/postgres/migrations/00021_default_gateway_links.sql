-- +goose Up
-- The links the owner chose for a machine's default gateway, per family
-- (MAAS's gateway_link_ipv4/ipv6); NULL lets the network model choose.
-- A link that goes takes the choice with it.
ALTER TABLE machines ADD COLUMN gateway_link_ipv4 BIGINT REFERENCES ip_addresses (id) ON DELETE SET NULL;
ALTER TABLE machines ADD COLUMN gateway_link_ipv6 BIGINT REFERENCES ip_addresses (id) ON DELETE SET NULL;

-- +goose Down
ALTER TABLE machines DROP COLUMN gateway_link_ipv6;
ALTER TABLE machines DROP COLUMN gateway_link_ipv4;
