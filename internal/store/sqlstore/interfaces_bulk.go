package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

// MachineNetworks reads the site's network and the interfaces of every
// machine named, with their parents, links and chosen gateway links, in
// one read transaction and a handful of queries per 200 machines: what a
// list or an allocation needs of many machines at once.
func (s *Store) MachineNetworks(ctx context.Context, systemIDs []string) (*network.Network, map[string]*network.Machine, error) {
	var n *network.Network
	out := map[string]*network.Machine{}
	err := s.inReadTx(ctx, func(c conn) error {
		var err error
		if n, err = loadNetwork(ctx, c); err != nil {
			return err
		}
		for chunk := range slices.Chunk(dedupe(systemIDs), maxIDList) {
			if err := machineNetworks(ctx, c, chunk, out); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("load networks of %d machines: %w", len(systemIDs), err)
	}
	return n, out, nil
}

// machineNetworks adds the machines of ids (known ones only) to out.
func machineNetworks(ctx context.Context, c conn, ids []string, out map[string]*network.Machine) error {
	in := placeholders(len(ids))
	args := anys(ids)
	byMachine := map[string][]store.Interface{}
	type at struct {
		systemID string
		k        int
	}
	where := map[int64]at{} // interface ID: its machine and place there
	err := eachRow(ctx, c, `SELECT `+interfaceColumns+interfaceFrom+` WHERE m.system_id IN `+in+` ORDER BY i.id`, args,
		func(r *sql.Rows) error {
			i, err := scanInterface(r)
			if err != nil {
				return err
			}
			where[i.ID] = at{i.SystemID, len(byMachine[i.SystemID])}
			byMachine[i.SystemID] = append(byMachine[i.SystemID], i)
			return nil
		})
	if err != nil {
		return err
	}
	find := func(ifaceID int64) *store.Interface {
		w, ok := where[ifaceID]
		if !ok {
			return nil
		}
		return &byMachine[w.systemID][w.k]
	}
	err = eachRow(ctx, c, `SELECT p.child_id, p.parent_id FROM interface_parents p JOIN interfaces i ON i.id = p.child_id
		JOIN machines m ON m.id = i.machine_id WHERE m.system_id IN `+in+` ORDER BY p.child_id, p.parent_id`, args,
		func(r *sql.Rows) error {
			var child, parent int64
			if err := r.Scan(&child, &parent); err != nil {
				return err
			}
			if i := find(child); i != nil {
				i.Parents = append(i.Parents, parent)
			}
			return nil
		})
	if err != nil {
		return err
	}
	links, err := listOf(ctx, c, `SELECT `+ipColumns+ipFrom+` WHERE m.system_id IN `+in+` ORDER BY a.id`, args, scanIP)
	if err != nil {
		return err
	}
	for _, l := range links {
		if i := find(l.InterfaceID); i != nil {
			i.Links = append(i.Links, l)
		}
	}
	return eachRow(ctx, c, `SELECT system_id, gateway_link_ipv4, gateway_link_ipv6 FROM machines WHERE system_id IN `+in, args,
		func(r *sql.Rows) error {
			var id string
			var v4, v6 sql.NullInt64
			if err := r.Scan(&id, &v4, &v6); err != nil {
				return err
			}
			m := store.MachineOf(byMachine[id])
			m.GatewayLink4, m.GatewayLink6 = int(v4.Int64), int(v6.Int64)
			out[id] = m
			return nil
		})
}
