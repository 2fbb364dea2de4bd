-- +goose Up
-- Who a DNS name belongs to: the user whose address reservation made it,
-- or '' for administrators (names made through dnsresources/, and every
-- name made before owners were kept). A user adds to, and a release takes
-- from, only names of its own.
ALTER TABLE dnsresources ADD COLUMN owner TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE dnsresources DROP COLUMN owner;
