package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/anvilmetal/anvil/internal/store"
)

// CreateScriptSet stores a set and its results in one transaction.
func (s *Store) CreateScriptSet(ctx context.Context, set store.ScriptSet) (store.ScriptSet, error) {
	set.Created = s.now()
	err := s.inTx(ctx, func(q conn) error {
		if err := q.queryRow(ctx, `INSERT INTO script_sets (system_id, result_type, created) VALUES (?, ?, ?) RETURNING id`,
			set.SystemID, int(set.ResultType), s.tv(set.Created)).Scan(&set.ID); err != nil {
			return err
		}
		for i := range set.Results {
			r := &set.Results[i]
			r.SetID = set.ID
			params, err := json.Marshal(r.Parameters)
			if err != nil {
				return err
			}
			if err := q.queryRow(ctx, `INSERT INTO script_results (set_id, script_id, script_version_id, name, hardware_type, instance, parameters, status)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, set.ID, nullID(r.ScriptID), nullID(r.ScriptVersionID), r.Name,
				int(r.HardwareType), r.Instance, string(params), int(r.Status)).Scan(&r.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if s.d.IsForeignKeyViolation(err) {
			return store.ScriptSet{}, notFound("machine", set.SystemID)
		}
		return store.ScriptSet{}, fmt.Errorf("create script set of machine %s: %w", set.SystemID, err)
	}
	return set, nil
}

const resultCols = `r.id, r.set_id, r.script_id, r.script_version_id, r.name, r.hardware_type, r.instance, r.parameters, r.status,
	r.exit_status, r.output, r.stdout, r.stderr, r.result, r.started, r.ended, r.suppressed`

func scanResult(r *sql.Rows) (store.ScriptResult, error) {
	var (
		res          store.ScriptResult
		sid, vid, ex sql.NullInt64
		params       string
	)
	if err := r.Scan(&res.ID, &res.SetID, &sid, &vid, &res.Name, &res.HardwareType, &res.Instance, &params, &res.Status,
		&ex, &res.Output, &res.Stdout, &res.Stderr, &res.Result, timeDest{&res.Started}, timeDest{&res.Ended}, &res.Suppressed); err != nil {
		return res, err
	}
	res.ScriptID, res.ScriptVersionID = sid.Int64, vid.Int64
	if ex.Valid {
		n := int(ex.Int64)
		res.ExitStatus = &n
	}
	if err := json.Unmarshal([]byte(params), &res.Parameters); err != nil {
		return res, fmt.Errorf("parameters of result %d: %w", res.ID, err)
	}
	return res, nil
}

// ListScriptSets returns the machine's sets, newest first, with their
// results.
func (s *Store) ListScriptSets(ctx context.Context, systemID string) ([]store.ScriptSet, error) {
	var out []store.ScriptSet
	err := s.inReadTx(ctx, func(q conn) error {
		idx := map[int64]int{}
		if err := eachRow(ctx, q, `SELECT id, system_id, result_type, created FROM script_sets WHERE system_id = ? ORDER BY id DESC`,
			[]any{systemID}, func(r *sql.Rows) error {
				var set store.ScriptSet
				if err := r.Scan(&set.ID, &set.SystemID, &set.ResultType, timeDest{&set.Created}); err != nil {
					return err
				}
				idx[set.ID] = len(out)
				out = append(out, set)
				return nil
			}); err != nil {
			return err
		}
		return eachRow(ctx, q, `SELECT `+resultCols+` FROM script_results r JOIN script_sets s ON s.id = r.set_id
			WHERE s.system_id = ? ORDER BY r.id`, []any{systemID}, func(r *sql.Rows) error {
			res, err := scanResult(r)
			if err != nil {
				return err
			}
			if i, ok := idx[res.SetID]; ok {
				out[i].Results = append(out[i].Results, res)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("script sets of machine %s: %w", systemID, err)
	}
	return out, nil
}

// UpdateScriptResult loads one of the machine's results, applies fn and
// writes what fn may change: status, exit status, outputs, result, times.
func (s *Store) UpdateScriptResult(ctx context.Context, systemID string, id int64, fn func(*store.ScriptResult) error) (store.ScriptResult, error) {
	var res store.ScriptResult
	err := s.inTx(ctx, func(q conn) error {
		found := false
		err := eachRow(ctx, q, `SELECT `+resultCols+` FROM script_results r JOIN script_sets s ON s.id = r.set_id
			WHERE r.id = ? AND s.system_id = ?`+s.d.ForUpdateRow, []any{id, systemID}, func(r *sql.Rows) error {
			var err error
			res, err = scanResult(r)
			found = true
			return err
		})
		if err != nil {
			return err
		}
		if !found {
			return notFound("script result", strconv.FormatInt(id, 10))
		}
		if err := fn(&res); err != nil {
			return err
		}
		var ex any
		if res.ExitStatus != nil {
			ex = *res.ExitStatus
		}
		_, err = q.exec(ctx, `UPDATE script_results SET status = ?, exit_status = ?, output = ?, stdout = ?, stderr = ?, result = ?,
			started = ?, ended = ?, suppressed = ? WHERE id = ?`, int(res.Status), ex, nonNilBytes(res.Output), nonNilBytes(res.Stdout),
			nonNilBytes(res.Stderr), nonNilBytes(res.Result), s.ntv(res.Started), s.ntv(res.Ended), res.Suppressed, id)
		return err
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return store.ScriptResult{}, err
		}
		return store.ScriptResult{}, fmt.Errorf("update script result %d of machine %s: %w", id, systemID, err)
	}
	return res, nil
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
