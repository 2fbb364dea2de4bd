-- +goose Up
-- Pruning finds old events and discoveries by time.
CREATE INDEX events_created ON events (created);
CREATE INDEX discoveries_last_seen ON discoveries (last_seen);

-- +goose Down
DROP INDEX discoveries_last_seen;
DROP INDEX events_created;
