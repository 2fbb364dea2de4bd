-- +goose Up
-- A rack's sighting of a boot answers at most one hello that counts: the
-- signatures spent, kept a day (pruned) so a copy cannot be replayed.
CREATE TABLE spent_sightings (
    id        TEXT PRIMARY KEY,
    system_id TEXT NOT NULL DEFAULT '',
    spent     TIMESTAMPTZ NOT NULL
);
CREATE INDEX spent_sightings_spent ON spent_sightings (spent);

-- The last boot held for a machine added by its BMC alone, for an
-- administrator to accept (op=accept): one a machine.
CREATE TABLE held_boots (
    system_id TEXT PRIMARY KEY REFERENCES machines (system_id) ON DELETE CASCADE,
    macs      TEXT NOT NULL,
    boot_mac  TEXT NOT NULL DEFAULT '',
    uuid      TEXT NOT NULL DEFAULT '',
    source    TEXT NOT NULL DEFAULT '',
    reason    TEXT NOT NULL DEFAULT '',
    created   TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE held_boots;
DROP TABLE spent_sightings;
