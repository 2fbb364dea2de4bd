-- +goose Up
-- The racks that run power commands, by the id each gives itself when it
-- claims them, with the BMC networks it declared and when it last asked
-- for work: requests go only to a live rack that reaches their BMC, and
-- one that no live rack reaches is refused at once.
CREATE TABLE rack_power (
    rack_id  TEXT PRIMARY KEY,
    hostname TEXT NOT NULL,
    networks TEXT NOT NULL,
    seen     INTEGER NOT NULL
);

-- +goose Down
DROP TABLE rack_power;
