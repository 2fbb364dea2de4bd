-- +goose Up
-- When a machine was last deployed with the image (MAAS's last_deployed);
-- NULL until one is.
ALTER TABLE boot_resources ADD COLUMN last_deployed INTEGER;

-- +goose Down
ALTER TABLE boot_resources DROP COLUMN last_deployed;
