-- +goose Up
-- What makes a deployment of the image DEPLOYED: '' or 'os' (the deployed
-- OS reports it is up), 'local_boot' (its first boot from disk).
ALTER TABLE boot_resources ADD COLUMN deployed_at TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE boot_resources DROP COLUMN deployed_at;
