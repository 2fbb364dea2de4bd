-- +goose Up
-- What an administrator trusts an enrolled rack with: the networks whose
-- BMCs it may power (bmc_networks) and the subnets it is confirmed to
-- serve (served_subnets), both CIDRs joined by commas. A secret carries
-- the BMC networks the rack it enrols is granted. Racks enrolled before
-- have none: an administrator grants them.
ALTER TABLE racks ADD COLUMN bmc_networks TEXT NOT NULL DEFAULT '';
ALTER TABLE racks ADD COLUMN served_subnets TEXT NOT NULL DEFAULT '';
ALTER TABLE rack_secrets ADD COLUMN bmc_networks TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE rack_secrets DROP COLUMN bmc_networks;
ALTER TABLE racks DROP COLUMN served_subnets;
ALTER TABLE racks DROP COLUMN bmc_networks;
