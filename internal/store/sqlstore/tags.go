package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/anvilmetal/anvil/internal/store"
)

var tagName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func validTagName(name string) error {
	if !tagName.MatchString(name) {
		return fmt.Errorf("tag name %q is not valid: use letters, digits, '-' and '_'", name)
	}
	return nil
}

const tagCols = `id, name, comment, definition, kernel_opts`

func scanTag(r interface{ Scan(...any) error }) (store.Tag, error) {
	var t store.Tag
	err := r.Scan(&t.ID, &t.Name, &t.Comment, &t.Definition, &t.KernelOpts)
	return t, err
}

// ListTags returns every tag by name.
func (s *Store) ListTags(ctx context.Context) ([]store.Tag, error) {
	var out []store.Tag
	err := eachRow(ctx, s.conn(s.read), `SELECT `+tagCols+` FROM tags ORDER BY name`, nil, func(r *sql.Rows) error {
		t, err := scanTag(r)
		out = append(out, t)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	return out, nil
}

// GetTag returns one tag, or an error wrapping store.ErrNotFound.
func (s *Store) GetTag(ctx context.Context, name string) (store.Tag, error) {
	return getTag(ctx, s.conn(s.read), name)
}

func getTag(ctx context.Context, q conn, name string) (store.Tag, error) {
	t, err := scanTag(q.queryRow(ctx, `SELECT `+tagCols+` FROM tags WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return t, notFound("tag", name)
	}
	if err != nil {
		return t, fmt.Errorf("get tag %q: %w", name, err)
	}
	return t, nil
}

// CreateTag stores a tag. Its name must match ^[a-zA-Z0-9_-]+$ and be free
// (else a *store.ConflictError).
func (s *Store) CreateTag(ctx context.Context, t store.Tag) (store.Tag, error) {
	if err := validTagName(t.Name); err != nil {
		return t, fmt.Errorf("create tag: %w", err)
	}
	err := s.conn(s.write).queryRow(ctx, `INSERT INTO tags (name, comment, definition, kernel_opts)
		VALUES (?, ?, ?, ?) RETURNING id`, t.Name, t.Comment, t.Definition, t.KernelOpts).Scan(&t.ID)
	if err != nil {
		return t, fmt.Errorf("create tag %q: %w", t.Name, s.uniqueName(err, "tag", t.Name))
	}
	return t, nil
}

// UpdateTag renames the tag when t.Name is set and differs, and sets its
// comment, definition and kernel options.
func (s *Store) UpdateTag(ctx context.Context, name string, t store.Tag) (store.Tag, error) {
	if t.Name == "" {
		t.Name = name
	}
	if err := validTagName(t.Name); err != nil {
		return t, fmt.Errorf("update tag %q: %w", name, err)
	}
	err := s.inTx(ctx, func(q conn) error {
		cur, err := getTag(ctx, q, name)
		if err != nil {
			return err
		}
		t.ID = cur.ID
		_, err = q.exec(ctx, `UPDATE tags SET name = ?, comment = ?, definition = ?, kernel_opts = ? WHERE id = ?`,
			t.Name, t.Comment, t.Definition, t.KernelOpts, t.ID)
		if err != nil || cur.Name == t.Name {
			return s.uniqueName(err, "tag", t.Name)
		}
		return bumpTagged(ctx, q, t.ID)
	})
	if err != nil {
		return store.Tag{}, fmt.Errorf("update tag %q: %w", name, err)
	}
	return t, nil
}

// DeleteTag removes a tag and its links to machines.
func (s *Store) DeleteTag(ctx context.Context, name string) error {
	err := s.inTx(ctx, func(q conn) error {
		t, err := getTag(ctx, q, name)
		if err != nil {
			return err
		}
		if err := bumpTagged(ctx, q, t.ID); err != nil {
			return err
		}
		_, err = q.exec(ctx, `DELETE FROM tags WHERE id = ?`, t.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete tag %q: %w", name, err)
	}
	return nil
}

// bumpTagged increments the version of every machine carrying the tag: its
// tag_names change, and readers that cache by version must see that.
func bumpTagged(ctx context.Context, q conn, tagID int64) error {
	_, err := q.exec(ctx, `UPDATE machines SET version = version + 1
		WHERE id IN (SELECT machine_id FROM machine_tags WHERE tag_id = ?)`, tagID)
	return err
}

// bumpVersions increments the version of the given machines.
func bumpVersions(ctx context.Context, q conn, ids []int64) error {
	for chunk := range slices.Chunk(ids, maxIDList) {
		if _, err := q.exec(ctx, `UPDATE machines SET version = version + 1 WHERE id IN `+placeholders(len(chunk)), anys(chunk)...); err != nil {
			return err
		}
	}
	return nil
}

// TagMachines links the tag to the machines in add and unlinks it from those
// in remove, in one transaction: an unknown tag or system ID fails the call
// with store.ErrNotFound and changes nothing. Linking a machine that already
// carries the tag does nothing; a machine in both lists ends up untagged.
func (s *Store) TagMachines(ctx context.Context, tag string, add, remove []string) error {
	err := s.inTx(ctx, func(q conn) error {
		t, err := getTag(ctx, q, tag)
		if err != nil {
			return err
		}
		addIDs, err := machineIDs(ctx, q, add)
		if err != nil {
			return err
		}
		removeIDs, err := machineIDs(ctx, q, remove)
		if err != nil {
			return err
		}
		for _, id := range addIDs {
			if _, err := q.exec(ctx, `INSERT INTO machine_tags (machine_id, tag_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, t.ID); err != nil {
				return err
			}
		}
		if err := bumpVersions(ctx, q, append(slices.Clip(addIDs), removeIDs...)); err != nil {
			return err
		}
		for ids := range slices.Chunk(removeIDs, maxIDList) {
			_, err := q.exec(ctx, `DELETE FROM machine_tags WHERE tag_id = ? AND machine_id IN `+placeholders(len(ids)),
				append([]any{t.ID}, anys(ids)...)...)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tag machines with %q: %w", tag, err)
	}
	return nil
}

// linkTags links a new machine to the named tags, which must exist.
func linkTags(ctx context.Context, q conn, machineID int64, names []string) error {
	for _, name := range names {
		t, err := getTag(ctx, q, name)
		if err != nil {
			return err
		}
		if _, err := q.exec(ctx, `INSERT INTO machine_tags (machine_id, tag_id) VALUES (?, ?)`, machineID, t.ID); err != nil {
			return fmt.Errorf("link tag %q: %w", name, err)
		}
	}
	return nil
}

// machineIDs resolves system IDs to row IDs; any unknown one is an error
// wrapping store.ErrNotFound.
func machineIDs(ctx context.Context, q conn, systemIDs []string) ([]int64, error) {
	systemIDs = dedupe(systemIDs)
	found := make(map[string]int64, len(systemIDs))
	for part := range slices.Chunk(systemIDs, maxIDList) {
		err := eachRow(ctx, q, `SELECT id, system_id FROM machines WHERE system_id IN `+placeholders(len(part)), anys(part),
			func(r *sql.Rows) error {
				var id int64
				var sid string
				err := r.Scan(&id, &sid)
				found[sid] = id
				return err
			})
		if err != nil {
			return nil, err
		}
	}
	ids := make([]int64, 0, len(systemIDs))
	for _, sid := range systemIDs {
		id, ok := found[sid]
		if !ok {
			return nil, notFound("machine", sid)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
