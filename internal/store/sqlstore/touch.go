package sqlstore

import "context"

// A machine's version is what readers that cache its rendering check
// (the API's list cache, in every region). UpdateMachine bumps it; the
// writes below change what a machine shows without going through it (its
// interfaces, their parents and links, its gateway choices), so they bump
// it in their own transaction.

// touchMachine bumps the version of the machine of row id.
func touchMachine(ctx context.Context, q conn, machineID int64) error {
	_, err := q.exec(ctx, `UPDATE machines SET version = version + 1 WHERE id = ?`, machineID)
	return err
}

// touchSystemID bumps the version of the machine of that system_id.
func touchSystemID(ctx context.Context, q conn, systemID string) error {
	_, err := q.exec(ctx, `UPDATE machines SET version = version + 1 WHERE system_id = ?`, systemID)
	return err
}

// touchByInterface bumps the version of the machine owning the interface.
func touchByInterface(ctx context.Context, q conn, ifaceID int64) error {
	if ifaceID == 0 {
		return nil
	}
	_, err := q.exec(ctx, `UPDATE machines SET version = version + 1 WHERE id IN (SELECT machine_id FROM interfaces WHERE id = ?)`, ifaceID)
	return err
}

// touchByAddress bumps the version of the machine whose interface holds
// the ip_addresses row (none for a reservation).
func touchByAddress(ctx context.Context, q conn, addrID int64) error {
	_, err := q.exec(ctx, `UPDATE machines SET version = version + 1 WHERE id IN
		(SELECT i.machine_id FROM interfaces i JOIN ip_addresses a ON a.interface_id = i.id WHERE a.id = ?)`, addrID)
	return err
}
