package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/pressly/goose/v3"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/storage"
)

// goMigrations are the migrations that rewrite JSON the database keeps
// as text, which SQL cannot do alike on SQLite and PostgreSQL. They are
// numbered in the same sequence as the dialects' .sql files (goose
// refuses a version given twice).
func goMigrations(numbered bool) []*goose.Migration {
	c := func(tx *sql.Tx) conn { return conn{q: tx, numbered: numbered} }
	return []*goose.Migration{
		// 00037: every storage object gets the UUID MAAS makes with it,
		// and the script summary the ids of the newest sets. Nothing to
		// undo: older versions ignore both.
		goose.NewGoMigration(37, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			return fillStorageUUIDs(ctx, c(tx))
		}}, &goose.GoFunc{Mode: goose.TransactionEnabled}),
	}
}

// fillStorageUUIDs gives each machine's stored storage configuration a
// UUID for every object that lacks one, and its script summary the ids of
// its newest commissioning and testing sets.
func fillStorageUUIDs(ctx context.Context, c conn) error {
	type row struct{ systemID, storage, scripts string }
	var rows []row
	if err := eachRow(ctx, c, `SELECT system_id, storage_config, script_status FROM machines WHERE storage_config <> '' OR script_status <> ''`, nil,
		func(r *sql.Rows) error {
			var x row
			if err := r.Scan(&x.systemID, &x.storage, &x.scripts); err != nil {
				return err
			}
			rows = append(rows, x)
			return nil
		}); err != nil {
		return err
	}
	newest := map[string]map[scripts.Type]int64{}
	if err := eachRow(ctx, c, `SELECT system_id, result_type, MAX(id) FROM script_sets GROUP BY system_id, result_type`, nil,
		func(r *sql.Rows) error {
			var sys string
			var typ, id int64
			if err := r.Scan(&sys, &typ, &id); err != nil {
				return err
			}
			if newest[sys] == nil {
				newest[sys] = map[scripts.Type]int64{}
			}
			newest[sys][scripts.Type(typ)] = id
			return nil
		}); err != nil {
		return err
	}
	for _, x := range rows {
		if x.storage != "" {
			var sc storage.Config
			if err := json.Unmarshal([]byte(x.storage), &sc); err != nil {
				return fmt.Errorf("storage configuration of machine %s: %w", x.systemID, err)
			}
			if sc.MissingUUIDs() {
				b, _ := json.Marshal(sc.WithAllUUIDs(storage.RandomUUID)) // plain data: cannot fail
				if _, err := c.exec(ctx, `UPDATE machines SET storage_config = ? WHERE system_id = ?`, string(b), x.systemID); err != nil {
					return err
				}
			}
		}
		if x.scripts != "" {
			var sum machine.ScriptSummary
			if err := json.Unmarshal([]byte(x.scripts), &sum); err != nil {
				return fmt.Errorf("script status of machine %s: %w", x.systemID, err)
			}
			com, test := newest[x.systemID][scripts.Commissioning], newest[x.systemID][scripts.Testing]
			if sum.CommissioningSet != com || sum.TestingSet != test {
				sum.CommissioningSet, sum.TestingSet = com, test
				b, _ := json.Marshal(sum) // plain data: cannot fail
				if _, err := c.exec(ctx, `UPDATE machines SET script_status = ? WHERE system_id = ?`, string(b), x.systemID); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
