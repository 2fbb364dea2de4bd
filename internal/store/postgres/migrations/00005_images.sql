-- Boot resources (images) as MAAS's API shows them: a resource per name
-- and architecture, and its files, one per uploaded set. The bytes live in
-- the data directory under their SHA-256; complete says they are there
-- and were verified.

-- +goose Up
CREATE TABLE boot_resources (
    id           BIGSERIAL PRIMARY KEY,
    name         TEXT NOT NULL,
    architecture TEXT NOT NULL,
    title        TEXT NOT NULL DEFAULT '',
    base_image   TEXT NOT NULL DEFAULT '',
    created      TIMESTAMPTZ NOT NULL,
    updated      TIMESTAMPTZ NOT NULL,
    UNIQUE (name, architecture)
);

CREATE TABLE boot_resource_files (
    id          BIGSERIAL PRIMARY KEY,
    resource_id BIGINT NOT NULL REFERENCES boot_resources (id) ON DELETE CASCADE,
    version     TEXT NOT NULL,
    label       TEXT NOT NULL DEFAULT 'uploaded',
    filename    TEXT NOT NULL,
    filetype    TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    size        BIGINT NOT NULL,
    complete    BOOLEAN NOT NULL DEFAULT FALSE,
    created     TIMESTAMPTZ NOT NULL,
    UNIQUE (resource_id, version)
);
CREATE INDEX boot_resource_files_sha256 ON boot_resource_files (sha256);

-- +goose Down
DROP TABLE boot_resource_files;
DROP TABLE boot_resources;
