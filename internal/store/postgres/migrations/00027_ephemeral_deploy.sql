-- +goose Up
-- A deployment that runs from memory (MAAS 3.5's ephemeral_deploy): the
-- disks are not written, and each boot deploys it to memory again.
ALTER TABLE machines ADD COLUMN ephemeral_deploy BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE machines DROP COLUMN ephemeral_deploy;
