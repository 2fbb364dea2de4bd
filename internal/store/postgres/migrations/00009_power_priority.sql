-- +goose Up
-- Queued power actions by kind: a claim looks for actions (anything but
-- a query) first, so that an operator's command or a drift correction
-- does not wait behind a sweep's worth of queued polls.
CREATE INDEX power_requests_state_action ON power_requests (state, action);

-- +goose Down
DROP INDEX power_requests_state_action;
