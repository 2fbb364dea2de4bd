-- +goose Up
-- A token's name: the consumer name MAAS gives each API key
-- (account/ op=create_authorisation_token name=...). Keys made before
-- have MAAS's default.
ALTER TABLE tokens ADD COLUMN name TEXT NOT NULL DEFAULT 'MAAS consumer';

-- The racks that follow the boot stream, as rackcontrollers/ lists them:
-- who they said they are and when one was last connected.
CREATE TABLE racks (
    system_id TEXT PRIMARY KEY,
    hostname  TEXT NOT NULL,
    address   TEXT NOT NULL,
    version   TEXT NOT NULL,
    seen      TIMESTAMPTZ NOT NULL
);

-- Where an imported SSH key came from, as MAAS's keysource ("gh:alice");
-- empty for a key added by hand.
ALTER TABLE sshkeys ADD COLUMN keysource TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sshkeys DROP COLUMN keysource;
DROP TABLE racks;
ALTER TABLE tokens DROP COLUMN name;
