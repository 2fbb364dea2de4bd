-- +goose Up
-- A token's name: the consumer name MAAS gives each API key
-- (account/ op=create_authorisation_token name=...). Keys made before
-- have MAAS's default.
ALTER TABLE tokens ADD COLUMN name TEXT NOT NULL DEFAULT 'MAAS consumer';

-- +goose Down
ALTER TABLE tokens DROP COLUMN name;
