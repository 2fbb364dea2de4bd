-- Region processes sharing this database, by the URL they answer at, so
-- that one can fetch from another what only the other has on disk (image
-- bytes live in the data directory of the region that received them).

-- +goose Up
CREATE TABLE regions (
    url   TEXT PRIMARY KEY,
    seen  INTEGER NOT NULL
);

-- +goose Down
DROP TABLE regions;
