package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// Devices live in the machines table with node_type 1 (MAAS's
// NODE_TYPE.DEVICE); every machine query asks for node_type 0.
const (
	nodeMachine = 0
	nodeDevice  = 1
)

const deviceSelect = `SELECT d.id, d.system_id, d.hostname, d.domain, d.description, d.owner, d.owner_data,
	COALESCE(pm.system_id, ''), COALESCE(pm.owner, ''), z.name, d.created, d.updated
	FROM machines d JOIN zones z ON z.id = d.zone_id LEFT JOIN machines pm ON pm.id = d.parent_id`

func deviceWhere(f store.DeviceFilter) *where {
	w := &where{}
	w.add("d.node_type = ?", nodeDevice)
	in(w, "d.system_id", f.SystemIDs)
	in(w, "d.hostname", f.Hostnames)
	if len(f.MACs) > 0 {
		w.add("d.id IN (SELECT machine_id FROM interfaces WHERE mac IN "+placeholders(len(f.MACs))+")", anys(f.MACs)...)
	}
	in(w, "d.domain", f.Domains)
	in(w, "z.name", f.Zones)
	in(w, "d.owner", f.Owners)
	in(w, "pm.system_id", f.Parents)
	if f.VisibleTo != "" {
		w.add("(d.owner = ? OR pm.owner = ?)", f.VisibleTo, f.VisibleTo)
	}
	return w
}

// loadDevices returns the devices f selects, by row id, with their
// physical interfaces and tags, in three queries.
func loadDevices(ctx context.Context, c conn, f store.DeviceFilter) ([]store.Device, error) {
	w := deviceWhere(f)
	var (
		out   []store.Device
		ids   []int64
		index = map[int64]int{}
	)
	err := eachRow(ctx, c, deviceSelect+w.sql()+" ORDER BY d.id", w.args, func(r *sql.Rows) error {
		var (
			id  int64
			d   store.Device
			owd string
		)
		if err := r.Scan(&id, &d.SystemID, &d.Hostname, &d.Domain, &d.Description, &d.Owner, &owd,
			&d.Parent, &d.ParentOwner, &d.Zone, timeDest{&d.Created}, timeDest{&d.Updated}); err != nil {
			return err
		}
		if owd != "" {
			if err := json.Unmarshal([]byte(owd), &d.OwnerData); err != nil {
				return fmt.Errorf("owner data of device %s: %w", d.SystemID, err)
			}
		}
		index[id] = len(out)
		out, ids = append(out, d), append(ids, id)
		return nil
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	set := "(SELECT d.id FROM machines d JOIN zones z ON z.id = d.zone_id LEFT JOIN machines pm ON pm.id = d.parent_id" + w.sql() + ")"
	err = eachRow(ctx, c, `SELECT machine_id, id, name, mac FROM interfaces WHERE type = 'physical' AND machine_id IN `+set+
		` ORDER BY machine_id, id`, w.args, func(r *sql.Rows) error {
		var mid int64
		var i machine.Interface
		if err := r.Scan(&mid, &i.ID, &i.Name, &i.MAC); err != nil {
			return err
		}
		if k, ok := index[mid]; ok {
			out[k].Interfaces = append(out[k].Interfaces, i)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("query device interfaces: %w", err)
	}
	err = eachNodeTag(ctx, c, set, w.args, func(mid int64, name string) {
		if k, ok := index[mid]; ok {
			out[k].Tags = append(out[k].Tags, name)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("query device tags: %w", err)
	}
	return out, nil
}

func (s *Store) ListDevices(ctx context.Context, f store.DeviceFilter) ([]store.Device, error) {
	var out []store.Device
	err := s.inReadTx(ctx, func(c conn) (err error) {
		out, err = loadDevices(ctx, c, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	return out, nil
}

func (s *Store) GetDevice(ctx context.Context, systemID string) (store.Device, error) {
	ds, err := s.ListDevices(ctx, store.DeviceFilter{SystemIDs: []string{systemID}})
	if err != nil {
		return store.Device{}, fmt.Errorf("get device %s: %w", systemID, err)
	}
	if len(ds) == 0 {
		return store.Device{}, notFound("device", systemID)
	}
	return ds[0], nil
}

// parentRow is the row id of the parent machine, nil for none; a
// device, or no node at all, is not a parent.
func parentRow(ctx context.Context, q conn, parent string) (any, error) {
	if parent == "" {
		return nil, nil
	}
	var id int64
	err := q.queryRow(ctx, `SELECT id FROM machines WHERE system_id = ? AND node_type = ?`, parent, nodeMachine).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("parent", parent)
	}
	return id, err
}

func ownerDataJSON(d map[string]string) string {
	if len(d) == 0 {
		return ""
	}
	b, _ := json.Marshal(d) // plain data: cannot fail
	return string(b)
}

func (s *Store) CreateDevice(ctx context.Context, d *store.Device, macs []string) error {
	c := *d
	c.Zone = cmp.Or(c.Zone, defaultGroup)
	now := s.now()
	c.Created, c.Updated = now, now
	ifaces := make([]machine.Interface, len(macs))
	for k, mac := range macs {
		ifaces[k] = machine.Interface{Name: fmt.Sprintf("eth%d", k), MAC: mac}
	}
	err := s.inTx(ctx, func(q conn) error {
		var err error
		if c.SystemID == "" {
			if c.SystemID, err = newSystemID(ctx, q); err != nil {
				return err
			}
		}
		zoneID, poolID, err := s.groupIDs(ctx, q, c.Zone, defaultGroup)
		if err != nil {
			return err
		}
		parent, err := parentRow(ctx, q, c.Parent)
		if err != nil {
			return err
		}
		probe := machine.Machine{SystemID: c.SystemID, Hostname: c.Hostname, Interfaces: ifaces}
		if err := findConflict(ctx, q, &probe, 0, true, true, false); err != nil {
			return err
		}
		var id int64
		err = q.queryRow(ctx, `INSERT INTO machines (system_id, hostname, domain, description, status, owner, owner_data,
			zone_id, pool_id, created, updated, node_type, parent_id) VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			c.SystemID, c.Hostname, c.Domain, c.Description, c.Owner, ownerDataJSON(c.OwnerData),
			zoneID, poolID, s.tv(c.Created), s.tv(c.Updated), nodeDevice, parent).Scan(&id)
		if err != nil {
			return s.explainUnique(ctx, fmt.Errorf("insert device: %w", err), &probe, 0)
		}
		if err := insertInterfaces(ctx, q, id, ifaces, nil); err != nil {
			return s.explainUnique(ctx, err, &probe, 0)
		}
		// Nothing has seen a device's NICs: they start on the default
		// fabric's untagged VLAN, and a link to a subnet moves them.
		if _, err := q.exec(ctx, `UPDATE interfaces SET vlan_id = (SELECT id FROM vlans WHERE fabric_id = 0 AND vid = 0)
			WHERE machine_id = ?`, id); err != nil {
			return fmt.Errorf("place device interfaces: %w", err)
		}
		if parent != nil {
			return q.queryRow(ctx, `SELECT owner FROM machines WHERE id = ?`, parent).Scan(&c.ParentOwner)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("create device %s: %w", c.Hostname, err)
	}
	c.Interfaces = ifaces
	*d = c
	return nil
}

func (s *Store) UpdateDevice(ctx context.Context, d store.Device) error {
	err := s.inTx(ctx, func(q conn) error {
		var self int64
		err := q.queryRow(ctx, `SELECT id FROM machines WHERE system_id = ? AND node_type = ?`, d.SystemID, nodeDevice).Scan(&self)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("device", d.SystemID)
		}
		if err != nil {
			return err
		}
		zoneID, _, err := s.groupIDs(ctx, q, cmp.Or(d.Zone, defaultGroup), defaultGroup)
		if err != nil {
			return err
		}
		parent, err := parentRow(ctx, q, d.Parent)
		if err != nil {
			return err
		}
		probe := machine.Machine{SystemID: d.SystemID, Hostname: d.Hostname}
		if err := findConflict(ctx, q, &probe, self, true, false, false); err != nil {
			return err
		}
		_, err = q.exec(ctx, `UPDATE machines SET hostname = ?, domain = ?, description = ?, zone_id = ?, parent_id = ?,
			owner_data = ?, updated = ?, version = version + 1 WHERE id = ?`,
			d.Hostname, d.Domain, d.Description, zoneID, parent, ownerDataJSON(d.OwnerData), s.tv(s.now()), self)
		if err != nil {
			return s.explainUnique(ctx, err, &probe, self)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update device %s: %w", d.SystemID, err)
	}
	return nil
}

// DeleteDevice deletes the row; interfaces and their addresses cascade.
func (s *Store) DeleteDevice(ctx context.Context, systemID string) error {
	res, err := s.conn(s.write).exec(ctx, `DELETE FROM machines WHERE system_id = ? AND node_type = ?`, systemID, nodeDevice)
	if err != nil {
		return fmt.Errorf("delete device %s: %w", systemID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("device", systemID)
	}
	return nil
}

func (s *Store) DeleteChildDevices(ctx context.Context, parent string) (int, error) {
	res, err := s.conn(s.write).exec(ctx, `DELETE FROM machines WHERE node_type = ?
		AND parent_id = (SELECT id FROM machines WHERE system_id = ? AND node_type = ?)`, nodeDevice, parent, nodeMachine)
	if err != nil {
		return 0, fmt.Errorf("delete devices of %s: %w", parent, err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
