package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/store"
)

const interfaceColumns = `i.id, m.system_id, i.name, i.type, i.mac, i.boot, i.vlan_id, i.enabled, i.params, i.tags`

const interfaceFrom = ` FROM interfaces i JOIN machines m ON m.id = i.machine_id`

func scanInterface(sc scanner) (store.Interface, error) {
	var i store.Interface
	var vlan sql.NullInt64
	var params, tags string
	if err := sc.Scan(&i.ID, &i.SystemID, &i.Name, &i.Type, &i.MAC, &i.Boot, &vlan, &i.Enabled, &params, &tags); err != nil {
		return i, err
	}
	i.VLANID = vlan.Int64
	i.Tags = splitList(tags)
	if err := json.Unmarshal([]byte(params), &i.Params); err != nil {
		return i, fmt.Errorf("interface %d params: %w", i.ID, err)
	}
	return i, nil
}

func (s *Store) ListInterfaces(ctx context.Context, systemID string) ([]store.Interface, error) {
	var out []store.Interface
	err := s.inReadTx(ctx, func(c conn) error {
		var err error
		out, err = listInterfaces(ctx, c, systemID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list interfaces of %s: %w", systemID, err)
	}
	return out, nil
}

// listInterfaces reads a node's interfaces with their parents and links;
// an unknown node is ErrNotFound.
func listInterfaces(ctx context.Context, c conn, systemID string) ([]store.Interface, error) {
	var mid int64
	if err := c.queryRow(ctx, `SELECT id FROM machines WHERE system_id = ?`, systemID).Scan(&mid); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound("machine", systemID)
		}
		return nil, err
	}
	var out []store.Interface
	index := map[int64]int{}
	err := eachRow(ctx, c, `SELECT `+interfaceColumns+interfaceFrom+` WHERE i.machine_id = ? ORDER BY i.id`, []any{mid},
		func(r *sql.Rows) error {
			i, err := scanInterface(r)
			index[i.ID] = len(out)
			out = append(out, i)
			return err
		})
	if err != nil {
		return nil, err
	}
	err = eachRow(ctx, c, `SELECT p.child_id, p.parent_id FROM interface_parents p JOIN interfaces i ON i.id = p.child_id
		WHERE i.machine_id = ? ORDER BY p.child_id, p.parent_id`, []any{mid}, func(r *sql.Rows) error {
		var child, parent int64
		if err := r.Scan(&child, &parent); err != nil {
			return err
		}
		if k, ok := index[child]; ok {
			out[k].Parents = append(out[k].Parents, parent)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	links, err := listIPAddresses(ctx, c, store.IPAddressFilter{SystemID: systemID})
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		if k, ok := index[l.InterfaceID]; ok {
			out[k].Links = append(out[k].Links, l)
		}
	}
	return out, nil
}

func (s *Store) GetInterface(ctx context.Context, systemID string, id int64) (store.Interface, error) {
	is, err := s.ListInterfaces(ctx, systemID)
	if err != nil {
		return store.Interface{}, err
	}
	for _, i := range is {
		if i.ID == id {
			return i, nil
		}
	}
	return store.Interface{}, notFound("interface", strconv.FormatInt(id, 10))
}

func (s *Store) CreateInterface(ctx context.Context, i store.Interface) (store.Interface, error) {
	err := s.inTx(ctx, func(q conn) error { return s.insertInterface(ctx, q, &i) })
	return i, err
}

// insertInterface stores a new interface, setting its ID.
func (s *Store) insertInterface(ctx context.Context, q conn, i *store.Interface) error {
	mid, err := s.interfaceCheck(ctx, q, *i)
	if err != nil {
		return err
	}
	// The machine's row first, as UpdateMachine locks it first.
	if err := touchMachine(ctx, q, mid); err != nil {
		return err
	}
	params, _ := json.Marshal(i.Params)
	if i.Type == "" {
		i.Type = "physical"
	}
	err = q.queryRow(ctx, `INSERT INTO interfaces (machine_id, name, type, mac, boot, vlan_id, enabled, params, tags)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, mid, i.Name, i.Type, i.MAC, i.Boot, nullID(i.VLANID), i.Enabled,
		string(params), strings.Join(i.Tags, ",")).Scan(&i.ID)
	if err != nil {
		return s.interfaceError(err, *i)
	}
	return setParents(ctx, q, i.ID, i.Parents)
}

func (s *Store) UpdateInterface(ctx context.Context, i store.Interface) (store.Interface, error) {
	err := s.inTx(ctx, func(q conn) error { return s.updateInterface(ctx, q, i) })
	return i, err
}

// updateInterface stores i over the interface of its ID.
func (s *Store) updateInterface(ctx context.Context, q conn, i store.Interface) error {
	mid, err := s.interfaceCheck(ctx, q, i)
	if err != nil {
		return err
	}
	// The machine's row first, as UpdateMachine locks it first.
	if err := touchMachine(ctx, q, mid); err != nil {
		return err
	}
	params, _ := json.Marshal(i.Params)
	res, err := q.exec(ctx, `UPDATE interfaces SET name = ?, type = ?, mac = ?, boot = ?, vlan_id = ?, enabled = ?, params = ?,
		tags = ? WHERE id = ? AND machine_id = ?`, i.Name, i.Type, i.MAC, i.Boot, nullID(i.VLANID), i.Enabled, string(params),
		strings.Join(i.Tags, ","), i.ID, mid)
	if err != nil {
		return s.interfaceError(err, i)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("interface", strconv.FormatInt(i.ID, 10))
	}
	if _, err := q.exec(ctx, `DELETE FROM interface_parents WHERE child_id = ?`, i.ID); err != nil {
		return err
	}
	return setParents(ctx, q, i.ID, i.Parents)
}

// interfaceCheck finds the node's row and refuses a name another of its
// interfaces has (MAAS's names are unique per node).
func (s *Store) interfaceCheck(ctx context.Context, q conn, i store.Interface) (int64, error) {
	var mid int64
	if err := q.queryRow(ctx, `SELECT id FROM machines WHERE system_id = ?`, i.SystemID).Scan(&mid); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, notFound("machine", i.SystemID)
		}
		return 0, err
	}
	var n int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM interfaces WHERE machine_id = ? AND name = ? AND id <> ?`, mid, i.Name, i.ID).Scan(&n); err != nil {
		return 0, err
	}
	if n > 0 {
		return 0, &store.ConflictError{What: fmt.Sprintf("interface name %q", i.Name), Holder: i.SystemID}
	}
	return mid, nil
}

func (s *Store) interfaceError(err error, i store.Interface) error {
	switch {
	case s.d.IsUniqueViolation(err):
		return &store.ConflictError{What: "mac_address " + i.MAC}
	case s.d.IsForeignKeyViolation(err):
		return fmt.Errorf("interface %s: its vlan %d %w", i.Name, i.VLANID, store.ErrNotFound)
	}
	return fmt.Errorf("interface %s: %w", i.Name, err)
}

// setParents stores child's parents, which must be interfaces of the
// same node.
func setParents(ctx context.Context, q conn, child int64, parents []int64) error {
	for _, p := range slices.Compact(slices.Sorted(slices.Values(parents))) {
		var n int
		err := q.queryRow(ctx, `SELECT COUNT(*) FROM interfaces a JOIN interfaces b ON a.machine_id = b.machine_id
			WHERE a.id = ? AND b.id = ?`, child, p).Scan(&n)
		if err != nil {
			return err
		}
		if n == 0 || p == child {
			return notFound("parent interface", strconv.FormatInt(p, 10))
		}
		if _, err := q.exec(ctx, `INSERT INTO interface_parents (child_id, parent_id) VALUES (?, ?)`, child, p); err != nil {
			return fmt.Errorf("parent %d: %w", p, err)
		}
	}
	return nil
}

func (s *Store) DeleteInterface(ctx context.Context, systemID string, id int64) error {
	return s.inTx(ctx, func(q conn) error { return deleteInterface(ctx, q, systemID, id) })
}

func deleteInterface(ctx context.Context, q conn, systemID string, id int64) error {
	if err := touchSystemID(ctx, q, systemID); err != nil {
		return err
	}
	return deleteRow(ctx, q, "interface", `DELETE FROM interfaces WHERE id = ? AND machine_id = (SELECT id FROM machines WHERE system_id = ?)`,
		id, systemID)
}
