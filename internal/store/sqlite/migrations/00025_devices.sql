-- +goose Up
-- Devices (MAAS's non-deployable nodes) share the machines table, as MAAS's
-- nodes share one: node_type 0 is a machine, 1 a device, so interfaces,
-- addresses and DNS reach both through the same rows. A device's parent is
-- a machine; deleting the machine deletes its devices, their interfaces
-- and addresses with them. Existing rows are machines.
ALTER TABLE machines ADD COLUMN node_type INTEGER NOT NULL DEFAULT 0;
ALTER TABLE machines ADD COLUMN parent_id INTEGER REFERENCES machines (id) ON DELETE CASCADE;
CREATE INDEX machines_parent ON machines (parent_id);
CREATE INDEX machines_node_type ON machines (node_type);

-- +goose Down
DELETE FROM machines WHERE node_type <> 0;
DROP INDEX machines_node_type;
DROP INDEX machines_parent;
ALTER TABLE machines DROP COLUMN parent_id;
ALTER TABLE machines DROP COLUMN node_type;
