package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/store"
)

// ListScripts returns every script with its revisions, by name.
func (s *Store) ListScripts(ctx context.Context) ([]store.Script, error) {
	out := []store.Script{}
	err := s.inReadTx(ctx, func(q conn) error {
		var err error
		out, err = loadScripts(ctx, q, ``)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list scripts: %w", err)
	}
	return out, nil
}

// GetScript finds a script by name, or by ID when ref is all digits (a
// script's name never is).
func (s *Store) GetScript(ctx context.Context, ref string) (store.Script, error) {
	var out []store.Script
	err := s.inReadTx(ctx, func(q conn) error {
		var err error
		if id, perr := strconv.ParseInt(ref, 10, 64); perr == nil {
			out, err = loadScripts(ctx, q, `WHERE s.id = ?`, id)
		} else {
			out, err = loadScripts(ctx, q, `WHERE s.name = ?`, ref)
		}
		return err
	})
	if err != nil {
		return store.Script{}, fmt.Errorf("script %q: %w", ref, err)
	}
	if len(out) == 0 {
		return store.Script{}, notFound("script", ref)
	}
	return out[0], nil
}

// loadScripts reads the scripts the where clause selects (a constant
// with parameters; empty for all) and their revisions, by name.
func loadScripts(ctx context.Context, q conn, clause string, args ...any) ([]store.Script, error) {
	var out []store.Script
	idx := map[int64]int{}
	err := eachRow(ctx, q, `SELECT s.id, s.is_default, s.meta, s.created, s.updated FROM scripts s `+clause+` ORDER BY s.name`, args, func(r *sql.Rows) error {
		var sc store.Script
		var meta string
		if err := r.Scan(&sc.ID, &sc.Default, &meta, timeDest{&sc.Created}, timeDest{&sc.Updated}); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(meta), &sc.Meta); err != nil {
			return fmt.Errorf("script %d: %w", sc.ID, err)
		}
		idx[sc.ID] = len(out)
		out = append(out, sc)
		return nil
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	err = eachRow(ctx, q, `SELECT v.id, v.script_id, v.data, v.comment, v.created FROM script_versions v
		JOIN scripts s ON s.id = v.script_id `+clause+` ORDER BY v.id DESC`, args, func(r *sql.Rows) error {
		var v store.ScriptVersion
		var sid int64
		if err := r.Scan(&v.ID, &sid, &v.Data, &v.Comment, timeDest{&v.Created}); err != nil {
			return err
		}
		if i, ok := idx[sid]; ok {
			out[i].Versions = append(out[i].Versions, v)
		}
		return nil
	})
	return out, err
}

// CreateScript stores a new script with its first revision.
func (s *Store) CreateScript(ctx context.Context, sc store.Script, text []byte, comment string) (store.Script, error) {
	meta, err := json.Marshal(sc.Meta)
	if err != nil {
		return store.Script{}, err
	}
	var id int64
	err = s.inTx(ctx, func(q conn) error {
		now := s.tv(s.now())
		if err := q.queryRow(ctx, `INSERT INTO scripts (name, is_default, meta, created, updated) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			sc.Meta.Name, sc.Default, string(meta), now, now).Scan(&id); err != nil {
			return err
		}
		return s.addVersion(ctx, q, id, text, comment)
	})
	if s.d.IsUniqueViolation(err) {
		return store.Script{}, &store.ConflictError{What: fmt.Sprintf("script %q", sc.Meta.Name)}
	}
	if err != nil {
		return store.Script{}, fmt.Errorf("create script %q: %w", sc.Meta.Name, err)
	}
	return s.GetScript(ctx, strconv.FormatInt(id, 10))
}

func (s *Store) addVersion(ctx context.Context, q conn, id int64, text []byte, comment string) error {
	_, err := q.exec(ctx, `INSERT INTO script_versions (script_id, data, comment, created) VALUES (?, ?, ?, ?)`,
		id, append([]byte{}, text...), comment, s.tv(s.now()))
	return err
}

// UpdateScript writes the metadata (the name with it) and adds text as the
// newest revision when it is not nil.
func (s *Store) UpdateScript(ctx context.Context, id int64, m scripts.Script, text []byte, comment string) (store.Script, error) {
	meta, err := json.Marshal(m)
	if err != nil {
		return store.Script{}, err
	}
	err = s.inTx(ctx, func(q conn) error {
		res, err := q.exec(ctx, `UPDATE scripts SET name = ?, meta = ?, updated = ? WHERE id = ?`, m.Name, string(meta), s.tv(s.now()), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("script", strconv.FormatInt(id, 10))
		}
		if text != nil {
			return s.addVersion(ctx, q, id, text, comment)
		}
		return nil
	})
	if s.d.IsUniqueViolation(err) {
		return store.Script{}, &store.ConflictError{What: fmt.Sprintf("script %q", m.Name)}
	}
	if err != nil {
		return store.Script{}, fmt.Errorf("update script %d: %w", id, err)
	}
	return s.GetScript(ctx, strconv.FormatInt(id, 10))
}

// RevertScript deletes the revisions newer than keep, which must be one
// of the script's.
func (s *Store) RevertScript(ctx context.Context, id, keep int64) (store.Script, error) {
	err := s.inTx(ctx, func(q conn) error {
		var n int
		if err := q.queryRow(ctx, `SELECT COUNT(*) FROM script_versions WHERE script_id = ? AND id = ?`, id, keep).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return notFound("script revision", strconv.FormatInt(keep, 10))
		}
		if _, err := q.exec(ctx, `DELETE FROM script_versions WHERE script_id = ? AND id > ?`, id, keep); err != nil {
			return err
		}
		_, err := q.exec(ctx, `UPDATE scripts SET updated = ? WHERE id = ?`, s.tv(s.now()), id)
		return err
	})
	if err != nil {
		return store.Script{}, fmt.Errorf("revert script %d to %d: %w", id, keep, err)
	}
	return s.GetScript(ctx, strconv.FormatInt(id, 10))
}

// DeleteScript removes a script and its revisions; results that ran it
// keep its name.
func (s *Store) DeleteScript(ctx context.Context, id int64) error {
	var got int64
	err := s.conn(s.write).queryRow(ctx, `DELETE FROM scripts WHERE id = ? RETURNING id`, id).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("script", strconv.FormatInt(id, 10))
	}
	if err != nil {
		return fmt.Errorf("delete script %d: %w", id, err)
	}
	return nil
}

// EnsureScript stores a shipped script, or brings the stored one's text
// and metadata up to date, keeping the operator's tags and timeout. Two
// regions starting at once both try; the loser's insert conflicts and
// it updates instead.
func (s *Store) EnsureScript(ctx context.Context, m scripts.Script, text []byte) error {
	for attempt := 0; ; attempt++ {
		cur, err := s.GetScript(ctx, m.Name)
		if errors.Is(err, store.ErrNotFound) {
			_, err = s.CreateScript(ctx, store.Script{Default: true, Meta: m}, text, "")
			var ce *store.ConflictError
			if errors.As(err, &ce) && attempt == 0 {
				continue
			}
			return err
		}
		if err != nil {
			return err
		}
		if len(cur.Versions) > 0 && bytes.Equal(cur.Versions[0].Data, text) {
			return nil
		}
		m.Tags, m.Timeout = cur.Meta.Tags, cur.Meta.Timeout
		_, err = s.UpdateScript(ctx, cur.ID, m, text, "shipped with Anvil")
		return err
	}
}
