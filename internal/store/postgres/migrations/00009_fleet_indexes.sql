-- +goose Up
-- Queued power actions by kind: a claim looks for actions (anything but
-- a query) first, so that an operator's command or a drift correction
-- does not wait behind a sweep's worth of queued polls.
CREATE INDEX power_requests_state_action ON power_requests (state, action);
-- What a machine list reads first (ListMachineVersions: every machine's
-- version, zone and pool, in hostname order) without visiting the rows:
-- the API's machine list and the rack's boot stream both run it.
CREATE INDEX machines_list ON machines (hostname, system_id, version, zone_id, pool_id);

-- +goose Down
DROP INDEX machines_list;
DROP INDEX power_requests_state_action;
