-- A deployment's cloud-init user data, base64 (it may be binary).

-- +goose Up
ALTER TABLE machines ADD COLUMN user_data TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE machines DROP COLUMN user_data;
