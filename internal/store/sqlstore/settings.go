package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Settings an operator changes at run time live beside the store's own
// (the key check); a prefix keeps the two apart.
const configPrefix = "config:"

// GetConfig returns a run-time setting; ok is false when it was never set.
func (s *Store) GetConfig(ctx context.Context, name string) (string, bool, error) {
	var v []byte
	err := s.conn(s.read).queryRow(ctx, `SELECT value FROM settings WHERE name = ?`, configPrefix+name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("setting %q: %w", name, err)
	}
	return string(v), true, nil
}

// ListConfig returns every run-time setting that was set.
func (s *Store) ListConfig(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	err := eachRow(ctx, s.conn(s.read), `SELECT name, value FROM settings WHERE name LIKE ?`, []any{configPrefix + "%"}, func(rows *sql.Rows) error {
		var (
			name string
			v    []byte
		)
		if err := rows.Scan(&name, &v); err != nil {
			return err
		}
		out[strings.TrimPrefix(name, configPrefix)] = string(v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list settings: %w", err)
	}
	return out, nil
}

// SetConfig stores a run-time setting.
func (s *Store) SetConfig(ctx context.Context, name, value string) error {
	if name == "" || strings.ContainsAny(name, " \t\n") {
		return fmt.Errorf("set setting: bad name %q", name)
	}
	_, err := s.conn(s.write).exec(ctx, `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
		configPrefix+name, []byte(value))
	if err != nil {
		return fmt.Errorf("set setting %q: %w", name, err)
	}
	return nil
}
