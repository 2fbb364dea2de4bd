package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/anvilmetal/anvil/internal/store"
)

// WriteInterfaces applies w in one transaction. A failure at any step (a
// name or MAC clash, an address another row holds) rolls back the steps
// before it: the machine's interfaces are as they were.
func (s *Store) WriteInterfaces(ctx context.Context, w *store.InterfaceWrite) error {
	created, added := int64(0), int64(0)
	err := s.inTx(ctx, func(q conn) error {
		// The machine's row first, as UpdateMachine locks it first.
		if err := touchSystemID(ctx, q, w.SystemID); err != nil {
			return err
		}
		if w.Create != nil {
			i := *w.Create
			i.SystemID = w.SystemID
			if err := s.insertInterface(ctx, q, &i); err != nil {
				return err
			}
			created = i.ID
		}
		for _, i := range w.Updates {
			i.SystemID = w.SystemID
			if err := s.updateInterface(ctx, q, i); err != nil {
				return err
			}
		}
		for _, id := range w.DropLinks {
			// A link already gone is as good as dropped.
			if err := deleteIP(ctx, q, id); err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("drop link %d: %w", id, err)
			}
		}
		for _, id := range w.Deletes {
			if err := deleteInterface(ctx, q, w.SystemID, id); err != nil {
				return err
			}
		}
		if w.AddLink != nil {
			a := *w.AddLink
			if a.InterfaceID == 0 {
				a.InterfaceID = created
			}
			if err := s.insertIP(ctx, q, &a); err != nil {
				return s.ipError(ctx, err, a)
			}
			added = a.ID
		}
		if w.Gateways != nil {
			gw := *w.Gateways
			for k := range gw {
				switch {
				case gw[k] == store.NewLink:
					gw[k] = added
				case slices.Contains(w.DropLinks, gw[k]):
					gw[k] = 0 // a dropped link is no one's gateway
				}
			}
			if _, err := q.exec(ctx, `UPDATE machines SET gateway_link_ipv4 = ?, gateway_link_ipv6 = ? WHERE system_id = ?`,
				nullID(gw[0]), nullID(gw[1]), w.SystemID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write interfaces of %s: %w", w.SystemID, err)
	}
	if w.Create != nil {
		w.Create.ID = created
	}
	if w.AddLink != nil {
		w.AddLink.ID = added
	}
	return nil
}
