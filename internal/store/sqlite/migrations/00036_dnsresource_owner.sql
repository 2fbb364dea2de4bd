-- +goose Up
-- Who a DNS name belongs to: the user whose address reservation made it,
-- or '' for administrators (names made through dnsresources/, and every
-- name made before owners were kept). A user adds to, and a release takes
-- from, only names of its own.
ALTER TABLE dnsresources ADD COLUMN owner TEXT NOT NULL DEFAULT '';

-- A name made before owners were kept is a user's when it holds no
-- records and every address it lists is one user's reservation: that
-- user's reservations made it, and its releases keep taking them off.
UPDATE dnsresources SET owner = (
    SELECT MIN(a.owner) FROM ip_addresses a
    WHERE a.alloc_type = 4 AND a.interface_id IS NULL AND a.owner <> ''
      AND (',' || dnsresources.ip_addresses || ',') LIKE ('%,' || a.ip || ',%'))
WHERE ip_addresses <> ''
  AND NOT EXISTS (SELECT 1 FROM dnsdata d WHERE d.dnsresource_id = dnsresources.id)
  AND (SELECT COUNT(DISTINCT a.owner) FROM ip_addresses a
       WHERE a.alloc_type = 4 AND a.interface_id IS NULL AND a.owner <> ''
         AND (',' || dnsresources.ip_addresses || ',') LIKE ('%,' || a.ip || ',%')) = 1
  AND (SELECT COUNT(*) FROM ip_addresses a
       WHERE a.alloc_type = 4 AND a.interface_id IS NULL AND a.owner <> ''
         AND (',' || dnsresources.ip_addresses || ',') LIKE ('%,' || a.ip || ',%'))
      = LENGTH(ip_addresses) - LENGTH(REPLACE(ip_addresses, ',', '')) + 1;

-- +goose Down
ALTER TABLE dnsresources DROP COLUMN owner;
