package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// defaultGroup is the zone and pool a machine lands in when it names none.
const defaultGroup = "default"

// machineCols are the columns CreateMachine and UpdateMachine write, in the
// order machineArgs gives their values.
var machineCols = []string{
	"system_id", "hostname", "domain", "architecture", "description",
	"status", "status_message", "previous_status", "status_expires", "owner", "zone_id", "pool_id",
	"power_type", "power_params", "power_state", "erase_mode", "drift_policy", "power_watch",
	"cpu_count", "memory", "storage", "hardware_uuid", "osystem", "distro_series", "netboot", "created", "updated", "version",
	"bmc_identity", "enrol_secret", "wrong_boots", "inventory", "user_data", "locked", "owner_data",
	"script_status", "storage_config", "ephemeral_deploy", "rescue_from",
}

var (
	insertMachineSQL = "INSERT INTO machines (" + strings.Join(machineCols, ", ") + ") VALUES " +
		placeholders(len(machineCols)) + " RETURNING id"
	updateMachineSQL = "UPDATE machines SET " + strings.Join(machineCols, " = ?, ") + " = ? WHERE id = ?"
)

// machineArgs converts the domain's named types to plain ones, which every
// driver accepts.
func (s *Store) machineArgs(m *machine.Machine, zoneID, poolID int64, params any) []any {
	watch, _ := json.Marshal(m.Watch) // plain data: cannot fail
	inv := ""
	if m.Inventory != nil {
		b, _ := json.Marshal(m.Inventory) // plain data: cannot fail
		inv = string(b)
	}
	ownerData := ""
	if len(m.OwnerData) > 0 {
		b, _ := json.Marshal(m.OwnerData) // plain data: cannot fail
		ownerData = string(b)
	}
	scriptStatus := ""
	if m.Scripts.Known {
		b, _ := json.Marshal(m.Scripts) // plain data: cannot fail
		scriptStatus = string(b)
	}
	sc := ""
	if m.StorageConfig != nil {
		b, _ := json.Marshal(m.StorageConfig) // plain data: cannot fail
		sc = string(b)
	}
	return []any{
		m.SystemID, m.Hostname, m.Domain, m.Architecture, m.Description,
		int(m.Status), m.StatusMessage, int(m.PreviousStatus), s.ntv(m.StatusExpires), m.Owner, zoneID, poolID,
		m.PowerType, params, string(m.PowerState), string(m.EraseMode), string(m.DriftPolicy), string(watch),
		m.CPUCount, m.Memory, m.Storage, m.HardwareUUID, m.OSystem, m.DistroSeries, m.Netboot, s.tv(m.Created), s.tv(m.Updated), m.Version,
		m.BMCIdentity, m.EnrolSecret, m.WrongBoots, inv, base64.StdEncoding.EncodeToString(m.UserData), m.Locked, ownerData,
		scriptStatus, sc, m.EphemeralDeploy, m.RescueFrom,
	}
}

// CreateMachine stores a new machine, its interfaces, its tags (which must
// exist) and events in one transaction, so that a failure leaves nothing.
//
// It assigns SystemID when empty (six characters from an alphabet without
// look-alikes), interface IDs, and Version 1; it sets Created and Updated to
// now when zero, and Zone and Pool to "default" when empty. An unknown zone,
// pool or tag fails with an error wrapping store.ErrNotFound; a system_id,
// hostname or MAC already taken fails with a *store.ConflictError naming the
// holder. Events get the machine's SystemID and Hostname where blank. On
// success *m is updated with everything assigned; on failure it is left
// unchanged.
func (s *Store) CreateMachine(ctx context.Context, m *machine.Machine, events []machine.Event) error {
	c := m.Clone()
	if err := validateMachine(&c); err != nil {
		return fmt.Errorf("create machine %s: %w", c.Hostname, err)
	}
	c.Zone, c.Pool = cmp.Or(c.Zone, defaultGroup), cmp.Or(c.Pool, defaultGroup)
	now := s.now()
	c.Created, c.Updated = cmp.Or(s.norm(c.Created), now), cmp.Or(s.norm(c.Updated), now)
	c.StatusExpires = s.norm(c.StatusExpires)
	c.Version = 1
	c.Tags = dedupe(c.Tags)
	params, err := s.sealParams(c.PowerParams)
	if err != nil {
		return fmt.Errorf("create machine %s: seal power parameters: %w", c.Hostname, err)
	}
	err = s.inTx(ctx, func(q conn) error {
		if c.SystemID == "" {
			if c.SystemID, err = newSystemID(ctx, q); err != nil {
				return err
			}
		}
		zoneID, poolID, err := s.groupIDs(ctx, q, c.Zone, c.Pool)
		if err != nil {
			return err
		}
		if err := findConflict(ctx, q, &c, 0, true, true, true); err != nil {
			return err
		}
		var id int64
		if err := q.queryRow(ctx, insertMachineSQL, s.machineArgs(&c, zoneID, poolID, params)...).Scan(&id); err != nil {
			return fmt.Errorf("insert machine: %w", err)
		}
		if err := insertInterfaces(ctx, q, id, c.Interfaces, nil); err != nil {
			return err
		}
		if err := linkTags(ctx, q, id, c.Tags); err != nil {
			return err
		}
		return s.insertEvents(ctx, q, forMachine(events, &c))
	})
	if err != nil {
		return fmt.Errorf("create machine %s: %w", c.Hostname, s.explainUnique(ctx, err, &c, 0))
	}
	*m = c
	return nil
}

// UpdateMachine loads the machine with its row locked against other writers
// (SELECT ... FOR UPDATE on PostgreSQL; SQLite's IMMEDIATE transaction holds
// the database's write lock), calls fn, and writes every column, the
// interfaces (replaced only if fn changed them; interfaces that keep their ID
// keep it) and fn's events, in one transaction.
//
// If fn returns an error, nothing is written and that error is returned
// unchanged. fn runs inside the transaction: it must not call the store (on
// SQLite that would wait forever for the one write connection), and should be
// quick. Changes fn makes to SystemID are an error; to Created, Version and
// Tags they are ignored (tags belong to TagMachines). Version is incremented.
// Updated becomes fn's value if fn moved it forward, else now. A zone or pool
// that does not exist fails with store.ErrNotFound, a hostname or MAC held by
// another machine with a *store.ConflictError.
func (s *Store) UpdateMachine(ctx context.Context, systemID string, fn store.UpdateFunc) (machine.Machine, error) {
	return s.updateMachine(ctx, systemID, fn, nil)
}

// UpdateMachineWithResults is UpdateMachine that also stores result files,
// as PutResults does, in the same transaction.
func (s *Store) UpdateMachineWithResults(ctx context.Context, systemID string, files map[string][]byte, fn store.UpdateFunc) (machine.Machine, error) {
	return s.updateMachine(ctx, systemID, fn, func(q conn) error { return s.putResults(ctx, q, systemID, files) })
}

// UpdateMachinePower is UpdateMachineWithResults whose fn may also ask for
// a power request: the machine, its events, the result files and the
// request (enqueued as EnqueuePower does, coalescing included) commit
// together or not at all.
func (s *Store) UpdateMachinePower(ctx context.Context, systemID string, files map[string][]byte, fn store.PowerUpdateFunc) (machine.Machine, *store.PowerRequest, bool, error) {
	var (
		req       *store.PowerRequest
		coalesced bool
	)
	m, err := s.updateMachine(ctx, systemID, func(m *machine.Machine) ([]machine.Event, error) {
		evs, r, err := fn(m)
		req = r
		return evs, err
	}, func(q conn) error {
		if len(files) > 0 {
			if err := s.putResults(ctx, q, systemID, files); err != nil {
				return err
			}
		}
		if req == nil {
			return nil
		}
		req.SystemID = systemID
		r, c, err := s.enqueue(ctx, q, *req)
		if err != nil {
			return fmt.Errorf("enqueue power %s: %w", req.Action, err)
		}
		req, coalesced = &r, c
		return nil
	})
	if err != nil {
		return machine.Machine{}, nil, false, err
	}
	return m, req, coalesced, nil
}

// updateMachine is UpdateMachine with more writes (also, when not nil) in
// its transaction, after the machine's.
func (s *Store) updateMachine(ctx context.Context, systemID string, fn store.UpdateFunc, also func(q conn) error) (machine.Machine, error) {
	var u machineUpdate
	err := s.inTx(ctx, func(q conn) error {
		if err := s.updateIn(ctx, q, systemID, fn, &u); err != nil {
			return err
		}
		if also != nil {
			return also(q)
		}
		return nil
	})
	return u.result(s, ctx, systemID, err)
}

// machineUpdate is what updateIn leaves for its caller to report.
type machineUpdate struct {
	m     machine.Machine
	rowID int64
	fnErr error
}

// updateIn is updateMachine's body inside the caller's transaction q.
func (s *Store) updateIn(ctx context.Context, q conn, systemID string, fn store.UpdateFunc, u *machineUpdate) error {
	ms, ids, err := s.loadMachines(ctx, q, store.MachineFilter{SystemIDs: []string{systemID}, WithPowerParams: true}, s.d.ForUpdate)
	if err != nil {
		return err
	}
	if len(ms) == 0 {
		return notFound("machine", systemID)
	}
	before := ms[0]
	u.m, u.rowID = before.Clone(), ids[0]
	events, err := fn(&u.m)
	if err != nil {
		u.fnErr = err
		return err
	}
	if err := s.writeUpdate(ctx, q, u.rowID, &before, &u.m); err != nil {
		return err
	}
	return s.insertEvents(ctx, q, forMachine(events, &u.m))
}

// result turns the transaction's error into updateMachine's: fn's own
// error unchanged, others explained (which unique value clashed).
func (u *machineUpdate) result(s *Store, ctx context.Context, systemID string, err error) (machine.Machine, error) {
	switch {
	case u.fnErr != nil:
		return machine.Machine{}, u.fnErr
	case err != nil:
		return machine.Machine{}, fmt.Errorf("update machine %s: %w", systemID, s.explainUnique(ctx, err, &u.m, u.rowID))
	}
	return u.m, nil
}

// writeUpdate stores m, as fn left it, over before.
func (s *Store) writeUpdate(ctx context.Context, q conn, id int64, before, m *machine.Machine) error {
	if m.SystemID != before.SystemID {
		return fmt.Errorf("system_id cannot change (to %q)", m.SystemID)
	}
	if err := validateMachine(m); err != nil {
		return err
	}
	m.Created, m.Version, m.Tags = before.Created, before.Version+1, before.Tags
	m.Zone, m.Pool = cmp.Or(m.Zone, defaultGroup), cmp.Or(m.Pool, defaultGroup)
	m.StatusExpires = s.norm(m.StatusExpires)
	if m.Updated.After(before.Updated) {
		m.Updated = s.norm(m.Updated)
	} else {
		m.Updated = s.now()
	}
	ifacesChanged := !slices.Equal(before.Interfaces, m.Interfaces)
	if err := findConflict(ctx, q, m, id, m.Hostname != before.Hostname, ifacesChanged, m.BMCIdentity != before.BMCIdentity); err != nil {
		return err
	}
	zoneID, poolID, err := s.groupIDs(ctx, q, m.Zone, m.Pool)
	if err != nil {
		return err
	}
	params, err := s.sealParams(m.PowerParams)
	if err != nil {
		return fmt.Errorf("seal power parameters: %w", err)
	}
	if _, err := q.exec(ctx, updateMachineSQL, append(s.machineArgs(m, zoneID, poolID, params), id)...); err != nil {
		return fmt.Errorf("write machine: %w", err)
	}
	if !ifacesChanged {
		return nil
	}
	keep := map[int64]bool{}
	for _, i := range before.Interfaces {
		keep[i.ID] = true
	}
	m.Interfaces = slices.Clone(m.Interfaces)
	return replaceInterfaces(ctx, q, id, m.Interfaces, keep)
}

// replaceInterfaces brings machine mid's physical interfaces to ifaces in
// place, so that those that stay keep their VLAN, parameters, parents and
// links: the ones gone are deleted, the kept ones (IDs in keep, each once)
// first take a placeholder MAC, so that two can swap MACs without
// tripping the unique index half-way, and then their values, and new ones
// are inserted.
func replaceInterfaces(ctx context.Context, q conn, mid int64, ifaces []machine.Interface, keep map[int64]bool) error {
	var kept []int64
	for _, i := range ifaces {
		if keep[i.ID] {
			delete(keep, i.ID)
			kept = append(kept, i.ID)
		}
	}
	gone := `DELETE FROM interfaces WHERE machine_id = ? AND type = 'physical'`
	if len(kept) > 0 {
		gone += ` AND id NOT IN ` + placeholders(len(kept))
	}
	if _, err := q.exec(ctx, gone, append([]any{mid}, anys(kept)...)...); err != nil {
		return fmt.Errorf("replace interfaces: %w", err)
	}
	for _, id := range kept {
		if _, err := q.exec(ctx, `UPDATE interfaces SET mac = ? WHERE id = ?`, "renaming:"+strconv.FormatInt(id, 10), id); err != nil {
			return fmt.Errorf("replace interfaces: %w", err)
		}
	}
	updated := map[int64]bool{}
	for k := range ifaces {
		i := &ifaces[k]
		if !slices.Contains(kept, i.ID) || updated[i.ID] {
			if err := insertInterfaces(ctx, q, mid, ifaces[k:k+1], nil); err != nil {
				return err
			}
			continue
		}
		updated[i.ID] = true
		if _, err := q.exec(ctx, `UPDATE interfaces SET name = ?, mac = ?, boot = ? WHERE id = ?`, i.Name, i.MAC, i.Boot, i.ID); err != nil {
			return fmt.Errorf("update interface %s: %w", i.MAC, err)
		}
	}
	return nil
}

// DeleteMachine removes a machine with its interfaces and tag links (the
// schema cascades) and appends events, which get the machine's SystemID and
// Hostname where blank, in one transaction.
func (s *Store) DeleteMachine(ctx context.Context, systemID string, events []machine.Event) error {
	err := s.inTx(ctx, func(q conn) error {
		m := machine.Machine{SystemID: systemID}
		var id int64
		err := q.queryRow(ctx, `DELETE FROM machines WHERE system_id = ? AND node_type = 0 RETURNING id, hostname`, systemID).Scan(&id, &m.Hostname)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("machine", systemID)
		}
		if err != nil {
			return err
		}
		return s.insertEvents(ctx, q, forMachine(events, &m))
	})
	if err != nil {
		return fmt.Errorf("delete machine %s: %w", systemID, err)
	}
	return nil
}

// validateMachine checks what the schema cannot express usefully.
func validateMachine(m *machine.Machine) error {
	if m.Hostname == "" {
		return errors.New("hostname is required")
	}
	for _, i := range m.Interfaces {
		if i.MAC == "" {
			return fmt.Errorf("interface %q has no MAC address", i.Name)
		}
	}
	return nil
}

// insertInterfaces stores ifaces for machine mid, setting their IDs. An
// interface whose ID is in keep is stored under that ID (each ID once).
func insertInterfaces(ctx context.Context, q conn, mid int64, ifaces []machine.Interface, keep map[int64]bool) error {
	for k := range ifaces {
		i := &ifaces[k]
		var err error
		if keep[i.ID] {
			delete(keep, i.ID)
			_, err = q.exec(ctx, `INSERT INTO interfaces (id, machine_id, name, mac, boot) VALUES (?, ?, ?, ?, ?)`,
				i.ID, mid, i.Name, i.MAC, i.Boot)
		} else {
			err = q.queryRow(ctx, `INSERT INTO interfaces (machine_id, name, mac, boot) VALUES (?, ?, ?, ?) RETURNING id`,
				mid, i.Name, i.MAC, i.Boot).Scan(&i.ID)
		}
		if err != nil {
			return fmt.Errorf("insert interface %s: %w", i.MAC, err)
		}
	}
	return nil
}

// findConflict returns a *store.ConflictError for the first of m's unique
// values held by a machine other than row self (0 for a new machine), or
// nil. It checks the system_id for new machines only, and the hostname,
// MACs and BMC when asked.
func findConflict(ctx context.Context, q conn, m *machine.Machine, self int64, hostname, macs, bmc bool) error {
	if self == 0 {
		h, hn, err := holder(ctx, q, `SELECT system_id, hostname FROM machines WHERE system_id = ?`, m.SystemID)
		if err != nil {
			return fmt.Errorf("check system_id: %w", err)
		}
		if h != "" {
			return &store.ConflictError{What: "system_id " + m.SystemID, Holder: h, HolderName: hn}
		}
	}
	if hostname {
		h, hn, err := holder(ctx, q, `SELECT system_id, hostname FROM machines WHERE hostname = ? AND id <> ?`, m.Hostname, self)
		if err != nil {
			return fmt.Errorf("check hostname: %w", err)
		}
		if h != "" {
			return &store.ConflictError{What: "hostname " + m.Hostname, Holder: h, HolderName: hn}
		}
	}
	if bmc && m.BMCIdentity != "" {
		// "bmc_identity <> ''" lets SQLite use the partial unique index;
		// without it each check read every machine, and adding 10,000
		// machines with BMCs took 82 s instead of a few.
		h, hn, err := holder(ctx, q, `SELECT system_id, hostname FROM machines WHERE bmc_identity = ? AND bmc_identity <> '' AND id <> ?`, m.BMCIdentity, self)
		if err != nil {
			return fmt.Errorf("check BMC: %w", err)
		}
		if h != "" {
			return &store.ConflictError{What: "BMC " + m.BMCIdentity, Holder: h, HolderName: hn}
		}
	}
	if !macs || len(m.Interfaces) == 0 {
		return nil
	}
	list := make([]string, len(m.Interfaces))
	for k, i := range m.Interfaces {
		if slices.Contains(list[:k], i.MAC) {
			return &store.ConflictError{What: "mac_address " + i.MAC + " (listed twice)"}
		}
		list[k] = i.MAC
	}
	var mac, h, hn string
	err := q.queryRow(ctx, `SELECT i.mac, m.system_id, m.hostname FROM interfaces i JOIN machines m ON m.id = i.machine_id
		WHERE i.type = 'physical' AND i.mac IN `+placeholders(len(list))+` AND i.machine_id <> ? ORDER BY i.mac LIMIT 1`,
		append(anys(list), self)...).Scan(&mac, &h, &hn)
	switch {
	case err == nil:
		return &store.ConflictError{What: "mac_address " + mac, Holder: h, HolderName: hn}
	case errors.Is(err, sql.ErrNoRows):
		return nil
	}
	return fmt.Errorf("check MAC addresses: %w", err)
}

// holder runs a query for one string, returning "" when there is no row.
// holder runs query, which selects a machine's system_id and hostname;
// both are empty when no machine holds the value.
func holder(ctx context.Context, q conn, query string, args ...any) (id, hostname string, err error) {
	err = q.queryRow(ctx, query, args...).Scan(&id, &hostname)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	}
	return id, hostname, err
}

// explainUnique turns a unique-index violation into a *store.ConflictError.
// findConflict catches clashes inside the transaction; a violation can still
// happen on PostgreSQL when two transactions insert the same value at once,
// and then the winner is visible once ours has rolled back.
func (s *Store) explainUnique(ctx context.Context, err error, m *machine.Machine, self int64) error {
	if !s.d.IsUniqueViolation(err) {
		return err
	}
	var ce *store.ConflictError
	if errors.As(findConflict(ctx, s.conn(s.read), m, self, true, true, true), &ce) {
		return ce
	}
	return &store.ConflictError{What: "system_id, hostname, BMC or mac_address"}
}

// forMachine returns events with m's SystemID and Hostname filled in where
// blank.
func forMachine(events []machine.Event, m *machine.Machine) []machine.Event {
	out := slices.Clone(events)
	for k := range out {
		out[k].SystemID = cmp.Or(out[k].SystemID, m.SystemID)
		out[k].Hostname = cmp.Or(out[k].Hostname, m.Hostname)
	}
	return out
}
