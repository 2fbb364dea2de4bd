-- Users' SSH public keys, put on the machines they deploy.

-- +goose Up
CREATE TABLE sshkeys (
    id       BIGSERIAL PRIMARY KEY,
    user_id  BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key      TEXT NOT NULL,
    created  TIMESTAMPTZ NOT NULL,
    UNIQUE (user_id, key)
);

-- +goose Down
DROP TABLE sshkeys;
