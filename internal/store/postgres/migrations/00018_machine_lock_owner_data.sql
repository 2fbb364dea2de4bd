-- +goose Up
-- A locked machine refuses every change until it is unlocked (MAAS's
-- locked); owner_data is the owner's key=value workload annotations, a
-- JSON object, '' when there are none.
ALTER TABLE machines ADD COLUMN locked BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE machines ADD COLUMN owner_data TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE machines DROP COLUMN owner_data;
ALTER TABLE machines DROP COLUMN locked;
