-- +goose Up
-- DNS domains, as MAAS's: the default one, "maas", exists from the first
-- start with id 0, which every machine's JSON links to. ttl NULL inherits
-- default_dns_ttl. One domain at most is the default.
CREATE TABLE domains (
    id            BIGSERIAL PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    authoritative BOOLEAN NOT NULL DEFAULT TRUE,
    ttl           INTEGER,
    is_default    BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE UNIQUE INDEX domains_one_default ON domains (is_default) WHERE is_default;
INSERT INTO domains (id, name, authoritative, is_default) VALUES (0, 'maas', TRUE, TRUE);

-- A DNS resource is a name in a domain ("@" for the domain itself) with
-- addresses of its own (comma-separated) and records (dnsdata).
CREATE TABLE dnsresources (
    id           BIGSERIAL PRIMARY KEY,
    name         TEXT NOT NULL,
    domain_id    BIGINT NOT NULL REFERENCES domains (id),
    address_ttl  INTEGER,
    ip_addresses TEXT NOT NULL DEFAULT '',
    UNIQUE (domain_id, name)
);

CREATE TABLE dnsdata (
    id             BIGSERIAL PRIMARY KEY,
    dnsresource_id BIGINT NOT NULL REFERENCES dnsresources (id) ON DELETE CASCADE,
    rrtype         TEXT NOT NULL,
    rrdata         TEXT NOT NULL,
    ttl            INTEGER
);
CREATE INDEX dnsdata_resource ON dnsdata (dnsresource_id);

-- The zones' SOA serial, shared by every region on one database: it grows
-- when the zones' content (named by its hash) changes.
CREATE TABLE dns_serial (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    serial BIGINT NOT NULL,
    hash   TEXT NOT NULL
);
INSERT INTO dns_serial (id, serial, hash) VALUES (1, 1, '');

-- +goose Down
DROP TABLE dns_serial;
DROP TABLE dnsdata;
DROP TABLE dnsresources;
DROP TABLE domains;
