package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// sightingAge is how long a spent sighting is remembered: far longer than
// a sighting is good for (machine.CorroborationWindow).
const sightingAge = 24 * time.Hour

func (s *Store) SpendSighting(ctx context.Context, id, systemID string) (bool, error) {
	res, err := s.conn(s.write).exec(ctx, `INSERT INTO spent_sightings (id, system_id, spent) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		id, systemID, s.tv(s.now()))
	if err != nil {
		return false, fmt.Errorf("spend sighting for %s: %w", systemID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (s *Store) HoldBoot(ctx context.Context, h store.HeldBoot) error {
	_, err := s.conn(s.write).exec(ctx, `INSERT INTO held_boots (system_id, macs, boot_mac, uuid, source, reason, created)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (system_id) DO UPDATE SET macs = excluded.macs, boot_mac = excluded.boot_mac, uuid = excluded.uuid,
		source = excluded.source, reason = excluded.reason, created = excluded.created`,
		h.SystemID, strings.Join(h.MACs, ","), h.BootMAC, h.UUID, h.Source, h.Reason, s.tv(s.orNow(h.Created)))
	if err != nil {
		if s.d.IsForeignKeyViolation(err) {
			return notFound("machine", h.SystemID)
		}
		return fmt.Errorf("hold boot of %s: %w", h.SystemID, err)
	}
	return nil
}

func (s *Store) HeldBoot(ctx context.Context, systemID string) (store.HeldBoot, error) {
	h := store.HeldBoot{SystemID: systemID}
	var macs string
	err := s.conn(s.read).queryRow(ctx, `SELECT macs, boot_mac, uuid, source, reason, created FROM held_boots WHERE system_id = ?`, systemID).
		Scan(&macs, &h.BootMAC, &h.UUID, &h.Source, &h.Reason, timeDest{&h.Created})
	if errors.Is(err, sql.ErrNoRows) {
		return h, notFound("held boot of machine", systemID)
	}
	if err != nil {
		return h, fmt.Errorf("held boot of %s: %w", systemID, err)
	}
	if macs != "" {
		h.MACs = strings.Split(macs, ",")
	}
	return h, nil
}

func (s *Store) HeldBootMachines(ctx context.Context) ([]string, error) {
	rows, err := s.conn(s.read).query(ctx, `SELECT system_id FROM held_boots ORDER BY created, system_id`)
	if err != nil {
		return nil, fmt.Errorf("held boots: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("held boots: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func (s *Store) DeleteHeldBoot(ctx context.Context, systemID string) error {
	_, err := s.conn(s.write).exec(ctx, `DELETE FROM held_boots WHERE system_id = ?`, systemID)
	return err
}

// pruneSightings forgets sightings spent long ago.
func (s *Store) pruneSightings(ctx context.Context) error {
	_, err := s.conn(s.write).exec(ctx, `DELETE FROM spent_sightings WHERE spent < ?`, s.tv(s.now().Add(-sightingAge)))
	if err != nil {
		return fmt.Errorf("prune sightings: %w", err)
	}
	return nil
}
