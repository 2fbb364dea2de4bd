-- +goose Up
-- A machine's storage configuration (internal/storage's Config as JSON):
-- disks, partitions, RAID, LVM, bcache, filesystems and the ids the API
-- gives them. Empty: none (not commissioned, or the layout did not fit).
-- It changes with the machine's row, under the row's version.
ALTER TABLE machines ADD COLUMN storage_config TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE machines DROP COLUMN storage_config;
