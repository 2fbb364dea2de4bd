package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/anvilmetal/anvil/internal/store"
)

func (s *Store) ListFabrics(ctx context.Context) ([]store.Fabric, error) {
	out, err := listFabrics(ctx, s.conn(s.read))
	if err != nil {
		return nil, fmt.Errorf("list fabrics: %w", err)
	}
	return out, nil
}

func listFabrics(ctx context.Context, c conn) ([]store.Fabric, error) {
	return listOf(ctx, c, `SELECT `+fabricColumns+` FROM fabrics ORDER BY id`, nil, scanFabric)
}

const fabricColumns = `id, name, class_type, description`

func scanFabric(sc scanner) (store.Fabric, error) {
	var f store.Fabric
	err := sc.Scan(&f.ID, &f.Name, &f.ClassType, &f.Description)
	return f, err
}

func (s *Store) GetFabric(ctx context.Context, id int64) (store.Fabric, error) {
	f, err := scanFabric(s.conn(s.read).queryRow(ctx, `SELECT `+fabricColumns+` FROM fabrics WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return f, notFound("fabric", strconv.FormatInt(id, 10))
	}
	return f, err
}

func (s *Store) CreateFabric(ctx context.Context, f store.Fabric) (store.Fabric, error) {
	err := s.inTx(ctx, func(q conn) error {
		// A name is required by the schema; an unnamed fabric is named
		// after its id once it has one.
		name := f.Name
		if name == "" {
			name = "fabric-new-" + randomString(12, alphanumerics)
		}
		if err := q.queryRow(ctx, `INSERT INTO fabrics (name, class_type, description) VALUES (?, ?, ?) RETURNING id`,
			name, f.ClassType, f.Description).Scan(&f.ID); err != nil {
			return err
		}
		if f.Name == "" {
			f.Name = "fabric-" + strconv.FormatInt(f.ID, 10)
			if _, err := q.exec(ctx, `UPDATE fabrics SET name = ? WHERE id = ?`, f.Name, f.ID); err != nil {
				return err
			}
		}
		_, err := q.exec(ctx, `INSERT INTO vlans (fabric_id, vid, name) VALUES (?, 0, 'untagged')`, f.ID)
		return err
	})
	if err != nil {
		return f, s.nameConflict(err, "fabric", f.Name)
	}
	return f, nil
}

func (s *Store) UpdateFabric(ctx context.Context, f store.Fabric) (store.Fabric, error) {
	res, err := s.conn(s.write).exec(ctx, `UPDATE fabrics SET name = ?, class_type = ?, description = ? WHERE id = ?`,
		f.Name, f.ClassType, f.Description, f.ID)
	if err != nil {
		return f, s.nameConflict(err, "fabric", f.Name)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return f, notFound("fabric", strconv.FormatInt(f.ID, 10))
	}
	return f, nil
}

func (s *Store) DeleteFabric(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(q conn) error {
		if err := inUse(ctx, q, `SELECT (SELECT COUNT(*) FROM subnets WHERE vlan_id IN (SELECT id FROM vlans WHERE fabric_id = ?))`,
			id, "fabric", "subnets"); err != nil {
			return err
		}
		if err := inUse(ctx, q, `SELECT (SELECT COUNT(*) FROM interfaces WHERE vlan_id IN (SELECT id FROM vlans WHERE fabric_id = ?))`,
			id, "fabric", "interfaces"); err != nil {
			return err
		}
		return deleteRow(ctx, q, "fabric", `DELETE FROM fabrics WHERE id = ?`, id)
	})
}

// nameConflict explains a unique violation of a name as a ConflictError.
func (s *Store) nameConflict(err error, what, name string) error {
	if s.d.IsUniqueViolation(err) {
		return &store.ConflictError{What: fmt.Sprintf("%s name %q", what, name)}
	}
	return fmt.Errorf("%s %q: %w", what, name, err)
}

func (s *Store) ListSpaces(ctx context.Context) ([]store.Space, error) {
	out, err := listSpaces(ctx, s.conn(s.read))
	if err != nil {
		return nil, fmt.Errorf("list spaces: %w", err)
	}
	return out, nil
}

func listSpaces(ctx context.Context, c conn) ([]store.Space, error) {
	return listOf(ctx, c, `SELECT id, name, description FROM spaces ORDER BY id`, nil, scanSpace)
}

func scanSpace(sc scanner) (store.Space, error) {
	var sp store.Space
	err := sc.Scan(&sp.ID, &sp.Name, &sp.Description)
	return sp, err
}

func (s *Store) GetSpace(ctx context.Context, id int64) (store.Space, error) {
	sp, err := scanSpace(s.conn(s.read).queryRow(ctx, `SELECT id, name, description FROM spaces WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return sp, notFound("space", strconv.FormatInt(id, 10))
	}
	return sp, err
}

func (s *Store) CreateSpace(ctx context.Context, sp store.Space) (store.Space, error) {
	err := s.inTx(ctx, func(q conn) error {
		name := sp.Name
		if name == "" {
			name = "space-new-" + randomString(12, alphanumerics)
		}
		if err := q.queryRow(ctx, `INSERT INTO spaces (name, description) VALUES (?, ?) RETURNING id`, name, sp.Description).Scan(&sp.ID); err != nil {
			return err
		}
		if sp.Name == "" {
			sp.Name = "space-" + strconv.FormatInt(sp.ID, 10)
			_, err := q.exec(ctx, `UPDATE spaces SET name = ? WHERE id = ?`, sp.Name, sp.ID)
			return err
		}
		return nil
	})
	if err != nil {
		return sp, s.nameConflict(err, "space", sp.Name)
	}
	return sp, nil
}

func (s *Store) UpdateSpace(ctx context.Context, sp store.Space) (store.Space, error) {
	res, err := s.conn(s.write).exec(ctx, `UPDATE spaces SET name = ?, description = ? WHERE id = ?`, sp.Name, sp.Description, sp.ID)
	if err != nil {
		return sp, s.nameConflict(err, "space", sp.Name)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return sp, notFound("space", strconv.FormatInt(sp.ID, 10))
	}
	return sp, nil
}

func (s *Store) DeleteSpace(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(q conn) error {
		if _, err := q.exec(ctx, `UPDATE vlans SET space_id = NULL WHERE space_id = ?`, id); err != nil {
			return err
		}
		return deleteRow(ctx, q, "space", `DELETE FROM spaces WHERE id = ?`, id)
	})
}

const vlanColumns = `id, fabric_id, vid, name, mtu, dhcp_on, relay_vlan_id, space_id, primary_rack, secondary_rack, description`

func scanVLAN(sc scanner) (store.VLAN, error) {
	var v store.VLAN
	var relay, space sql.NullInt64
	err := sc.Scan(&v.ID, &v.FabricID, &v.VID, &v.Name, &v.MTU, &v.DHCPOn, &relay, &space, &v.PrimaryRack, &v.SecondaryRack, &v.Description)
	v.RelayVLANID, v.SpaceID = relay.Int64, space.Int64
	return v, err
}

func (s *Store) ListVLANs(ctx context.Context) ([]store.VLAN, error) {
	out, err := listVLANs(ctx, s.conn(s.read))
	if err != nil {
		return nil, fmt.Errorf("list vlans: %w", err)
	}
	return out, nil
}

func listVLANs(ctx context.Context, c conn) ([]store.VLAN, error) {
	return listOf(ctx, c, `SELECT `+vlanColumns+` FROM vlans ORDER BY fabric_id, vid`, nil, scanVLAN)
}

func (s *Store) GetVLAN(ctx context.Context, id int64) (store.VLAN, error) {
	v, err := scanVLAN(s.conn(s.read).queryRow(ctx, `SELECT `+vlanColumns+` FROM vlans WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return v, notFound("vlan", strconv.FormatInt(id, 10))
	}
	return v, err
}

func (s *Store) GetVLANByVID(ctx context.Context, fabricID int64, vid int) (store.VLAN, error) {
	return vlanByVID(ctx, s.conn(s.read), fabricID, vid)
}

func vlanByVID(ctx context.Context, c conn, fabricID int64, vid int) (store.VLAN, error) {
	v, err := scanVLAN(c.queryRow(ctx, `SELECT `+vlanColumns+` FROM vlans WHERE fabric_id = ? AND vid = ?`, fabricID, vid))
	if errors.Is(err, sql.ErrNoRows) {
		return v, notFound("vlan", fmt.Sprintf("%d on fabric %d", vid, fabricID))
	}
	return v, err
}

// nullID stores 0 as NULL, for optional references.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func vlanArgs(v store.VLAN) []any {
	return []any{v.FabricID, v.VID, v.Name, v.MTU, v.DHCPOn, nullID(v.RelayVLANID), nullID(v.SpaceID), v.PrimaryRack,
		v.SecondaryRack, v.Description}
}

func (s *Store) CreateVLAN(ctx context.Context, v store.VLAN) (store.VLAN, error) {
	if v.MTU == 0 {
		v.MTU = 1500
	}
	err := s.conn(s.write).queryRow(ctx, `INSERT INTO vlans (fabric_id, vid, name, mtu, dhcp_on, relay_vlan_id, space_id,
		primary_rack, secondary_rack, description) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, vlanArgs(v)...).Scan(&v.ID)
	if err != nil {
		return v, s.vlanError(err, v)
	}
	return v, nil
}

func (s *Store) UpdateVLAN(ctx context.Context, v store.VLAN) (store.VLAN, error) {
	res, err := s.conn(s.write).exec(ctx, `UPDATE vlans SET fabric_id = ?, vid = ?, name = ?, mtu = ?, dhcp_on = ?,
		relay_vlan_id = ?, space_id = ?, primary_rack = ?, secondary_rack = ?, description = ? WHERE id = ?`,
		append(vlanArgs(v), v.ID)...)
	if err != nil {
		return v, s.vlanError(err, v)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return v, notFound("vlan", strconv.FormatInt(v.ID, 10))
	}
	return v, nil
}

func (s *Store) vlanError(err error, v store.VLAN) error {
	switch {
	case s.d.IsUniqueViolation(err):
		return &store.ConflictError{What: fmt.Sprintf("vid %d on fabric %d", v.VID, v.FabricID)}
	case s.d.IsForeignKeyViolation(err):
		return fmt.Errorf("vlan %d: its fabric, relay VLAN or space %w", v.VID, store.ErrNotFound)
	}
	return fmt.Errorf("vlan %d: %w", v.VID, err)
}

// DeleteVLAN deletes a tagged VLAN as MAAS does: its subnets and its
// interfaces other than VLAN interfaces move to the fabric's untagged
// VLAN, and VLAN interfaces on it are deleted with their links.
func (s *Store) DeleteVLAN(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(q conn) error {
		var untagged int64
		err := q.queryRow(ctx, `SELECT u.id FROM vlans v JOIN vlans u ON u.fabric_id = v.fabric_id AND u.vid = 0 WHERE v.id = ? AND v.vid <> 0`, id).Scan(&untagged)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("tagged vlan", strconv.FormatInt(id, 10))
		}
		if err != nil {
			return err
		}
		for _, q1 := range []string{
			`UPDATE subnets SET vlan_id = ? WHERE vlan_id = ?`,
			`UPDATE interfaces SET vlan_id = ? WHERE vlan_id = ? AND type <> 'vlan'`,
		} {
			if _, err := q.exec(ctx, q1, untagged, id); err != nil {
				return err
			}
		}
		if _, err := q.exec(ctx, `DELETE FROM interfaces WHERE vlan_id = ? AND type = 'vlan'`, id); err != nil {
			return err
		}
		return deleteRow(ctx, q, "vlan", `DELETE FROM vlans WHERE id = ?`, id)
	})
}
