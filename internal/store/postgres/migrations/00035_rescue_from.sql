-- +goose Up
-- The address rescue mode was asked from: the rescue environment's SSH
-- server keeps spare connections for it.
ALTER TABLE machines ADD COLUMN rescue_from TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE machines DROP COLUMN rescue_from;
