-- +goose Up
-- When a worker was about to send a request's command to the BMC: a re-run
-- after a lost lease checks the BMC first instead of sending it again.
ALTER TABLE power_requests ADD COLUMN sent TIMESTAMPTZ;

-- +goose Down
ALTER TABLE power_requests DROP COLUMN sent;
