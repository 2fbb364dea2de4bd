-- Web UI logins: a password per user (hashed) and browser sessions.

-- +goose Up
ALTER TABLE users ADD COLUMN password_hash TEXT NOT NULL DEFAULT '';
CREATE TABLE sessions (
    id_hash  TEXT PRIMARY KEY,
    user_id  BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf     TEXT NOT NULL,
    created  TIMESTAMPTZ NOT NULL,
    expires  TIMESTAMPTZ NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires);

-- +goose Down
DROP TABLE sessions;
ALTER TABLE users DROP COLUMN password_hash;
