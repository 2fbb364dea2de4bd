package sqlstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/storage"
	"github.com/anvilmetal/anvil/internal/store"
)

// machineSelect lists the columns scanMachine reads. Power parameters are
// only fetched (and decrypted) when asked for.
func machineSelect(withPower bool) string {
	power := "NULL"
	if withPower {
		power = "m.power_params"
	}
	return `SELECT m.id, m.system_id, m.hostname, m.domain, m.architecture, m.description,
		m.status, m.status_message, m.previous_status, m.status_expires, m.owner, z.name, p.name,
		m.power_type, ` + power + `, m.power_state, m.erase_mode, m.drift_policy, m.power_watch, m.cpu_count, m.memory, m.storage,
		m.hardware_uuid, m.osystem, m.distro_series, m.netboot, m.created, m.updated, m.version,
		m.bmc_identity, m.enrol_secret, m.wrong_boots, m.inventory, m.user_data, m.locked, m.owner_data, m.script_status,
		m.storage_config, m.ephemeral_deploy, m.rescue_from`
}

// scanMachine reads one row of machineSelect; the interfaces and tags come
// from separate queries.
func (s *Store) scanMachine(rows *sql.Rows) (int64, machine.Machine, error) {
	var (
		id     int64
		m      machine.Machine
		sealed []byte
		watch  string
		inv    string
		ud     string
		owd    string
		ss     string
		sc     string
	)
	err := rows.Scan(&id, &m.SystemID, &m.Hostname, &m.Domain, &m.Architecture, &m.Description,
		&m.Status, &m.StatusMessage, &m.PreviousStatus, timeDest{&m.StatusExpires}, &m.Owner, &m.Zone, &m.Pool,
		&m.PowerType, &sealed, &m.PowerState, &m.EraseMode, &m.DriftPolicy, &watch, &m.CPUCount, &m.Memory, &m.Storage,
		&m.HardwareUUID, &m.OSystem, &m.DistroSeries, &m.Netboot, timeDest{&m.Created}, timeDest{&m.Updated}, &m.Version,
		&m.BMCIdentity, &m.EnrolSecret, &m.WrongBoots, &inv, &ud, &m.Locked, &owd, &ss, &sc, &m.EphemeralDeploy, &m.RescueFrom)
	if err != nil {
		return 0, m, fmt.Errorf("scan machine: %w", err)
	}
	if watch != "" {
		if err := json.Unmarshal([]byte(watch), &m.Watch); err != nil {
			return 0, m, fmt.Errorf("power watch of machine %s: %w", m.SystemID, err)
		}
	}
	if ud != "" {
		if m.UserData, err = base64.StdEncoding.DecodeString(ud); err != nil {
			return 0, m, fmt.Errorf("user data of machine %s: %w", m.SystemID, err)
		}
	}
	if owd != "" {
		if err := json.Unmarshal([]byte(owd), &m.OwnerData); err != nil {
			return 0, m, fmt.Errorf("owner data of machine %s: %w", m.SystemID, err)
		}
	}
	if ss != "" {
		if err := json.Unmarshal([]byte(ss), &m.Scripts); err != nil {
			return 0, m, fmt.Errorf("script status of machine %s: %w", m.SystemID, err)
		}
	}
	if sc != "" {
		m.StorageConfig = new(storage.Config)
		if err := json.Unmarshal([]byte(sc), m.StorageConfig); err != nil {
			return 0, m, fmt.Errorf("storage configuration of machine %s: %w", m.SystemID, err)
		}
	}
	if inv != "" {
		m.Inventory = new(machine.Inventory)
		if err := json.Unmarshal([]byte(inv), m.Inventory); err != nil {
			return 0, m, fmt.Errorf("inventory of machine %s: %w", m.SystemID, err)
		}
	}
	if sealed != nil {
		if m.PowerParams, err = s.openParams(sealed); err != nil {
			return 0, m, fmt.Errorf("power parameters of machine %s: %w", m.SystemID, err)
		}
	}
	return id, m, nil
}

// sealParams returns the value stored for power parameters: the sealed JSON
// of the map, or NULL for an empty one (read back as nil).
func (s *Store) sealParams(p map[string]string) (any, error) {
	if len(p) == 0 {
		return nil, nil
	}
	js, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return s.sealer.Seal(js)
}

func (s *Store) openParams(sealed []byte) (map[string]string, error) {
	js, err := s.sealer.Open(sealed)
	if err != nil {
		return nil, err
	}
	var p map[string]string
	if err := json.Unmarshal(js, &p); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return p, nil
}

// maxIDList is the most machine IDs loadMachines passes as parameters when it
// fetches interfaces and tags; beyond it, it repeats the filter as a subquery
// instead, which keeps a 10,000-machine list to three queries.
const maxIDList = 200

// loadMachines returns the machines f selects, ordered by hostname then
// system_id, with their interfaces (by ID) and tags (by name), and their row
// IDs. It takes three queries whatever the number of machines. lock is
// appended to the machine query (Dialect.ForUpdate, or "").
func (s *Store) loadMachines(ctx context.Context, c conn, f store.MachineFilter, lock string) ([]machine.Machine, []int64, error) {
	w := machineWhere(f)
	tail, args := " ORDER BY m.hostname, m.system_id", w.args
	if f.Limit > 0 {
		tail += " LIMIT ?"
		args = append(slices.Clip(args), f.Limit)
	}
	rows, err := c.query(ctx, machineSelect(f.WithPowerParams)+machineFrom+w.sql()+tail+lock, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("query machines: %w", err)
	}
	var (
		ms  []machine.Machine
		ids []int64
	)
	index := map[int64]int{}
	for rows.Next() {
		id, m, err := s.scanMachine(rows)
		if err != nil {
			rows.Close()
			return nil, nil, err
		}
		index[id] = len(ms)
		ms, ids = append(ms, m), append(ids, id)
	}
	if err := closeRows(rows); err != nil {
		return nil, nil, fmt.Errorf("query machines: %w", err)
	}
	if len(ms) == 0 {
		return ms, ids, nil
	}

	set, setArgs := placeholders(len(ids)), anys(ids)
	if len(ids) > maxIDList {
		set, setArgs = "(SELECT m.id"+machineFrom+w.sql()+tail+")", args
	}
	err = eachRow(ctx, c, `SELECT machine_id, id, name, mac, boot FROM interfaces
		WHERE type = 'physical' AND machine_id IN `+set+` ORDER BY machine_id, id`, setArgs, func(r *sql.Rows) error {
		var mid int64
		var i machine.Interface
		if err := r.Scan(&mid, &i.ID, &i.Name, &i.MAC, &i.Boot); err != nil {
			return err
		}
		if k, ok := index[mid]; ok {
			ms[k].Interfaces = append(ms[k].Interfaces, i)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("query interfaces: %w", err)
	}
	err = eachNodeTag(ctx, c, set, setArgs, func(mid int64, name string) {
		if k, ok := index[mid]; ok {
			ms[k].Tags = append(ms[k].Tags, name)
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("query machine tags: %w", err)
	}
	return ms, ids, nil
}

// eachNodeTag calls fn with the row id and tag name of every tag the
// nodes of set (a parenthesised list or subquery, with args) carry, by
// tag name.
func eachNodeTag(ctx context.Context, c conn, set string, args []any, fn func(mid int64, name string)) error {
	return eachRow(ctx, c, `SELECT mt.machine_id, t.name FROM machine_tags mt JOIN tags t ON t.id = mt.tag_id
		WHERE mt.machine_id IN `+set+` ORDER BY t.name`, args, func(r *sql.Rows) error {
		var mid int64
		var name string
		if err := r.Scan(&mid, &name); err != nil {
			return err
		}
		fn(mid, name)
		return nil
	})
}

// eachRow runs a query and calls fn for every row.
func eachRow(ctx context.Context, c conn, query string, args []any, fn func(*sql.Rows) error) error {
	rows, err := c.query(ctx, query, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		if err := fn(rows); err != nil {
			rows.Close()
			return err
		}
	}
	return closeRows(rows)
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// GetMachine returns one machine with its interfaces, tags and decrypted
// power parameters; an unknown ID is an error wrapping store.ErrNotFound.
func (s *Store) GetMachine(ctx context.Context, systemID string) (machine.Machine, error) {
	var ms []machine.Machine
	err := s.inReadTx(ctx, func(c conn) (err error) {
		ms, _, err = s.loadMachines(ctx, c, store.MachineFilter{SystemIDs: []string{systemID}, WithPowerParams: true}, "")
		return err
	})
	if err != nil {
		return machine.Machine{}, fmt.Errorf("get machine %s: %w", systemID, err)
	}
	if len(ms) == 0 {
		return machine.Machine{}, notFound("machine", systemID)
	}
	return ms[0], nil
}

// ListMachines returns the machines f selects, ordered by hostname then
// system_id, in three queries (machines, interfaces, tags) read from one
// snapshot. Power parameters are loaded only with f.WithPowerParams.
func (s *Store) ListMachines(ctx context.Context, f store.MachineFilter) ([]machine.Machine, error) {
	var ms []machine.Machine
	err := s.inReadTx(ctx, func(c conn) (err error) {
		ms, _, err = s.loadMachines(ctx, c, f, "")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list machines: %w", err)
	}
	return ms, nil
}

// ListMachineVersions returns what identifies the current state of each
// machine f selects, in ListMachines's order, from the machine rows alone.
func (s *Store) ListMachineVersions(ctx context.Context, f store.MachineFilter) ([]store.MachineVersion, error) {
	w := machineWhere(f)
	q, args := `SELECT m.system_id, m.version, z.name, p.name`+machineFrom+w.sql()+` ORDER BY m.hostname, m.system_id`, w.args
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(slices.Clip(args), f.Limit)
	}
	var out []store.MachineVersion
	err := s.inReadTx(ctx, func(c conn) error {
		return eachRow(ctx, c, q, args, func(r *sql.Rows) error {
			var v store.MachineVersion
			if err := r.Scan(&v.SystemID, &v.Version, &v.Zone, &v.Pool); err != nil {
				return err
			}
			out = append(out, v)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list machine versions: %w", err)
	}
	return out, nil
}

// ExpiredMachines returns, soonest deadline first, the machines whose
// status_expires is set and at or before now (the current time if zero).
func (s *Store) ExpiredMachines(ctx context.Context, now time.Time) ([]string, error) {
	now = s.orNow(now)
	var ids []string
	err := eachRow(ctx, s.conn(s.read), `SELECT system_id FROM machines
		WHERE status_expires IS NOT NULL AND status_expires <= ? ORDER BY status_expires, system_id`,
		[]any{s.tv(now)}, func(r *sql.Rows) error {
			var id string
			err := r.Scan(&id)
			ids = append(ids, id)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("expired machines: %w", err)
	}
	return ids, nil
}

// CountMachines returns the number of machines.
func (s *Store) CountMachines(ctx context.Context) (int, error) {
	var n int
	if err := s.conn(s.read).queryRow(ctx, `SELECT COUNT(*) FROM machines WHERE node_type = 0`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count machines: %w", err)
	}
	return n, nil
}
