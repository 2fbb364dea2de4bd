-- Users' SSH public keys, put on the machines they deploy.

-- +goose Up
CREATE TABLE sshkeys (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id  INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key      TEXT NOT NULL,
    created  INTEGER NOT NULL,
    UNIQUE (user_id, key)
);

-- +goose Down
DROP TABLE sshkeys;
