-- +goose Up
-- The addresses a rack answers DNS at (port 53), as it reports them when
-- it follows the boot stream, comma-separated: deployed machines on
-- subnets that allow DNS are given them as nameservers.
ALTER TABLE racks ADD COLUMN dns_addresses TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE racks DROP COLUMN dns_addresses;
