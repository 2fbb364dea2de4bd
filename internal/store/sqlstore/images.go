package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

const bootFileCols = `id, resource_id, version, label, filename, filetype, sha256, size, complete, created`

func scanBootFile(r interface{ Scan(...any) error }) (store.BootResourceFile, error) {
	var f store.BootResourceFile
	err := r.Scan(&f.ID, &f.ResourceID, &f.Version, &f.Label, &f.Filename, &f.Filetype, &f.SHA256, &f.Size,
		&f.Complete, timeDest{&f.Created})
	return f, err
}

const bootResourceCols = `id, name, architecture, title, base_image, deployed_at, created, updated, last_deployed`

func scanBootResource(r interface{ Scan(...any) error }) (store.BootResource, error) {
	var b store.BootResource
	err := r.Scan(&b.ID, &b.Name, &b.Architecture, &b.Title, &b.BaseImage, &b.DeployedAt, timeDest{&b.Created}, timeDest{&b.Updated}, timeDest{&b.LastDeployed})
	return b, err
}

// bootFiles returns the files matching where (a condition on
// boot_resource_files with its arguments), newest first.
func bootFiles(ctx context.Context, q conn, where string, args ...any) ([]store.BootResourceFile, error) {
	var out []store.BootResourceFile
	err := eachRow(ctx, q, `SELECT `+bootFileCols+` FROM boot_resource_files WHERE `+where+` ORDER BY id DESC`, args,
		func(r *sql.Rows) error {
			f, err := scanBootFile(r)
			out = append(out, f)
			return err
		})
	return out, err
}

func getBootResource(ctx context.Context, q conn, id int64) (store.BootResource, error) {
	b, err := scanBootResource(q.queryRow(ctx, `SELECT `+bootResourceCols+` FROM boot_resources WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return b, notFound("boot resource", strconv.FormatInt(id, 10))
	}
	if err != nil {
		return b, err
	}
	b.Files, err = bootFiles(ctx, q, `resource_id = ?`, id)
	return b, err
}

// CreateBootResource upserts the resource by name and architecture and adds
// f as a new set, versioned by the day it was created ("20250314", then
// "20250314.1", ...) as MAAS versions uploaded sets.
func (s *Store) CreateBootResource(ctx context.Context, r store.BootResource, f store.BootResourceFile) (store.BootResource, error) {
	now := s.now()
	var out store.BootResource
	err := s.inTx(ctx, func(q conn) error {
		var other int64
		err := q.queryRow(ctx, `SELECT size FROM boot_resource_files WHERE sha256 = ? AND size <> ? LIMIT 1`, f.SHA256, f.Size).Scan(&other)
		if err == nil {
			return &store.ConflictError{What: fmt.Sprintf("sha256 %s (a file of %d bytes, not %d)", f.SHA256, other, f.Size)}
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		// The upsert locks the resource's row, so concurrent uploads to
		// one resource take versions one after another.
		var id int64
		err = q.queryRow(ctx, `INSERT INTO boot_resources (name, architecture, title, base_image, deployed_at, created, updated)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (name, architecture) DO UPDATE SET title = excluded.title,
				base_image = CASE WHEN excluded.base_image = '' THEN boot_resources.base_image ELSE excluded.base_image END,
				deployed_at = CASE WHEN excluded.deployed_at = '' THEN boot_resources.deployed_at ELSE excluded.deployed_at END,
				updated = excluded.updated
			RETURNING id`, r.Name, r.Architecture, r.Title, r.BaseImage, string(r.DeployedAt), s.tv(now), s.tv(now)).Scan(&id)
		if err != nil {
			return err
		}
		version, err := nextBootVersion(ctx, q, id, now.Format("20060102"))
		if err != nil {
			return err
		}
		if f.Label == "" {
			f.Label = "uploaded"
		}
		err = q.queryRow(ctx, `INSERT INTO boot_resource_files (resource_id, version, label, filename, filetype, sha256, size, complete, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, id, version, f.Label, f.Filename, f.Filetype, f.SHA256, f.Size,
			f.Complete, s.tv(now)).Scan(&f.ID)
		if err != nil {
			return err
		}
		if f.Complete {
			if _, err := dropOlderBootFiles(ctx, q, id, f.ID); err != nil {
				return err
			}
		}
		out, err = getBootResource(ctx, q, id)
		return err
	})
	if err != nil {
		return out, fmt.Errorf("create boot resource %s %s: %w", r.Name, r.Architecture, err)
	}
	return out, nil
}

// nextBootVersion is day, or day.N for the first N not yet taken.
func nextBootVersion(ctx context.Context, q conn, resourceID int64, day string) (string, error) {
	taken := map[string]bool{}
	err := eachRow(ctx, q, `SELECT version FROM boot_resource_files WHERE resource_id = ?`, []any{resourceID}, func(r *sql.Rows) error {
		var v string
		err := r.Scan(&v)
		taken[v] = true
		return err
	})
	if err != nil {
		return "", err
	}
	v := day
	for n := 1; taken[v]; n++ {
		v = day + "." + strconv.Itoa(n)
	}
	return v, nil
}

// dropOlderBootFiles deletes the resource's files older than keep and
// returns them.
func dropOlderBootFiles(ctx context.Context, q conn, resourceID, keep int64) ([]store.BootResourceFile, error) {
	old, err := bootFiles(ctx, q, `resource_id = ? AND id < ?`, resourceID, keep)
	if err != nil || len(old) == 0 {
		return nil, err
	}
	_, err = q.exec(ctx, `DELETE FROM boot_resource_files WHERE resource_id = ? AND id < ?`, resourceID, keep)
	return old, err
}

// GetBootResource returns one resource with its files, newest first.
func (s *Store) GetBootResource(ctx context.Context, id int64) (store.BootResource, error) {
	var b store.BootResource
	err := s.inReadTx(ctx, func(q conn) error {
		var err error
		b, err = getBootResource(ctx, q, id)
		return err
	})
	return b, err
}

// ListBootResources returns every resource by name and architecture, each
// with its files, newest first.
func (s *Store) ListBootResources(ctx context.Context) ([]store.BootResource, error) {
	var out []store.BootResource
	err := s.inReadTx(ctx, func(q conn) error {
		err := eachRow(ctx, q, `SELECT `+bootResourceCols+` FROM boot_resources ORDER BY name, architecture`, nil, func(r *sql.Rows) error {
			b, err := scanBootResource(r)
			out = append(out, b)
			return err
		})
		if err != nil {
			return err
		}
		files, err := bootFiles(ctx, q, `1 = 1`)
		if err != nil {
			return err
		}
		at := make(map[int64]int, len(out))
		for i, b := range out {
			at[b.ID] = i
		}
		for _, f := range files {
			if i, ok := at[f.ResourceID]; ok {
				out[i].Files = append(out[i].Files, f)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list boot resources: %w", err)
	}
	return out, nil
}

// CompleteBootResourceFile marks the file complete and drops its
// resource's older files.
func (s *Store) CompleteBootResourceFile(ctx context.Context, fileID int64) ([]store.BootResourceFile, error) {
	var removed []store.BootResourceFile
	err := s.inTx(ctx, func(q conn) error {
		var resourceID int64
		err := q.queryRow(ctx, `UPDATE boot_resource_files SET complete = ? WHERE id = ? RETURNING resource_id`, true, fileID).Scan(&resourceID)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("boot resource file", strconv.FormatInt(fileID, 10))
		}
		if err != nil {
			return err
		}
		if _, err := q.exec(ctx, `UPDATE boot_resources SET updated = ? WHERE id = ?`, s.tv(s.now()), resourceID); err != nil {
			return err
		}
		removed, err = dropOlderBootFiles(ctx, q, resourceID, fileID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("complete boot resource file: %w", err)
	}
	return removed, nil
}

// MarkBootResourceDeployed records a deploy with the resource.
func (s *Store) MarkBootResourceDeployed(ctx context.Context, id int64, at time.Time) error {
	return s.inTx(ctx, func(q conn) error {
		res, err := q.exec(ctx, `UPDATE boot_resources SET last_deployed = ? WHERE id = ?`, s.tv(at), id)
		if err != nil {
			return fmt.Errorf("mark boot resource %d deployed: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("boot resource", strconv.FormatInt(id, 10))
		}
		return nil
	})
}

// DeleteBootResource removes the resource; its files go with it.
func (s *Store) DeleteBootResource(ctx context.Context, id int64) ([]store.BootResourceFile, error) {
	var removed []store.BootResourceFile
	err := s.inTx(ctx, func(q conn) error {
		b, err := getBootResource(ctx, q, id)
		if err != nil {
			return err
		}
		removed = b.Files
		if _, err := q.exec(ctx, `DELETE FROM boot_resource_files WHERE resource_id = ?`, id); err != nil {
			return err
		}
		_, err = q.exec(ctx, `DELETE FROM boot_resources WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("delete boot resource: %w", err)
	}
	return removed, nil
}

// BootResourceFilesBySHA256 lists the files with these bytes, newest first.
func (s *Store) BootResourceFilesBySHA256(ctx context.Context, sha256 string) ([]store.BootResourceFile, error) {
	files, err := bootFiles(ctx, s.conn(s.read), `sha256 = ?`, sha256)
	if err != nil {
		return nil, fmt.Errorf("boot resource files of %s: %w", sha256, err)
	}
	return files, nil
}

// SetBootResourceDeployedAt implements store.Store.
func (s *Store) SetBootResourceDeployedAt(ctx context.Context, id int64, d machine.DeployedAt) (store.BootResource, error) {
	var out store.BootResource
	err := s.inTx(ctx, func(q conn) error {
		res, err := q.exec(ctx, `UPDATE boot_resources SET deployed_at = ?, updated = ? WHERE id = ?`, string(d), s.tv(s.now()), id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return notFound("boot resource", strconv.FormatInt(id, 10))
		}
		out, err = getBootResource(ctx, q, id)
		return err
	})
	if err != nil {
		return out, fmt.Errorf("set deployed_at of boot resource %d: %w", id, err)
	}
	return out, nil
}
