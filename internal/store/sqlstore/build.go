package sqlstore

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/anvilmetal/anvil/internal/store"
)

// where collects AND-ed conditions and their arguments.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// in adds "expr IN (?, ...)" for a non-empty list; an empty list adds
// nothing, as an empty filter field means "any".
func in[T any](w *where, expr string, vals []T) {
	if len(vals) == 0 {
		return
	}
	w.add(expr+" IN "+placeholders(len(vals)), anys(vals)...)
}

// sql renders " WHERE a AND b", or "" with no conditions.
func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// placeholders returns "(?, ?, ?)" for n values.
func placeholders(n int) string {
	return "(" + strings.Repeat("?, ", n-1) + "?)"
}

func anys[T any](vals []T) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

// machineFrom is the FROM clause every machine query shares; the filter's
// conditions refer to its aliases.
const machineFrom = ` FROM machines m JOIN zones z ON z.id = m.zone_id JOIN pools p ON p.id = m.pool_id`

// machineWhere renders a MachineFilter over machineFrom.
func machineWhere(f store.MachineFilter) *where {
	w := &where{}
	w.add("m.node_type = 0") // devices share the table
	in(w, "m.system_id", f.SystemIDs)
	in(w, "m.hostname", f.Hostnames)
	if len(f.MACs) > 0 {
		w.add("m.id IN (SELECT machine_id FROM interfaces WHERE mac IN "+placeholders(len(f.MACs))+")", anys(f.MACs)...)
	}
	in(w, "m.hardware_uuid", f.UUIDs)
	if f.BMCHost != "" {
		// The identity is type|host|port|system; '|' never occurs in a
		// host, and the caller compares exactly what LIKE lets through.
		w.add("m.bmc_identity LIKE ?", "%|"+f.BMCHost+"|%")
	}
	statuses := make([]int, len(f.Statuses))
	for i, st := range f.Statuses {
		statuses[i] = int(st)
	}
	in(w, "m.status", statuses)
	in(w, "z.name", f.Zones)
	in(w, "p.name", f.Pools)
	in(w, "m.owner", f.Owners)
	if f.Arch != "" {
		if strings.Contains(f.Arch, "/") {
			w.add("m.architecture = ?", f.Arch)
		} else {
			// "amd64" matches every amd64 subarchitecture, as in MAAS.
			prefix := f.Arch + "/"
			w.add("(m.architecture = ? OR substr(m.architecture, 1, ?) = ?)", f.Arch, len(prefix), prefix)
		}
	}
	if tags := dedupe(f.Tags); len(tags) > 0 {
		// A machine carries every tag when it matches as many as were asked.
		w.add(`m.id IN (SELECT mt.machine_id FROM machine_tags mt JOIN tags t ON t.id = mt.tag_id
			WHERE t.name IN `+placeholders(len(tags))+` GROUP BY mt.machine_id HAVING COUNT(*) = ?)`,
			append(anys(tags), len(tags))...)
	}
	if len(f.NotTags) > 0 {
		w.add(`m.id NOT IN (SELECT mt.machine_id FROM machine_tags mt JOIN tags t ON t.id = mt.tag_id
			WHERE t.name IN `+placeholders(len(f.NotTags))+`)`, anys(f.NotTags)...)
	}
	if f.MinCPU > 0 {
		w.add("m.cpu_count >= ?", f.MinCPU)
	}
	if f.MinMemory > 0 {
		w.add("m.memory >= ?", f.MinMemory)
	}
	if f.VisibleTo != "" {
		w.add("(m.owner = '' OR m.owner = ?)", f.VisibleTo)
	}
	return w
}

// Event query limits.
const (
	defaultEventLimit = 100
	maxEventLimit     = 1000
)

// eventQuery renders an EventFilter as a complete query over events e.
// Zones and Owner select events of machines that are in those zones, or
// owned by that user, now; events of deleted machines match neither.
func eventQuery(f store.EventFilter) (string, []any) {
	w := &where{}
	in(w, "e.hostname", f.Hostnames)
	in(w, "e.system_id", f.SystemIDs)
	if len(f.Zones) > 0 {
		w.add(`e.system_id IN (SELECT m.system_id FROM machines m JOIN zones z ON z.id = m.zone_id
			WHERE z.name IN `+placeholders(len(f.Zones))+`)`, anys(f.Zones)...)
	}
	if f.Owner != "" {
		w.add("e.system_id IN (SELECT system_id FROM machines WHERE owner = ?)", f.Owner)
	}
	if f.MinLevel != "" {
		w.add("e.level_rank >= ?", f.MinLevel.Rank())
	}
	if f.SkipTypePrefix != "" {
		w.add("substr(e.type, 1, ?) <> ?", utf8.RuneCountInString(f.SkipTypePrefix), f.SkipTypePrefix)
	}
	if f.BeforeID > 0 {
		w.add("e.id < ?", f.BeforeID)
	}
	if f.AfterID > 0 {
		w.add("e.id > ?", f.AfterID)
	}
	order := " ORDER BY e.id DESC"
	if f.Ascending {
		order = " ORDER BY e.id"
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultEventLimit
	}
	limit = min(limit, maxEventLimit)
	q := "SELECT " + eventCols + " FROM events e" + w.sql() + order + " LIMIT ?"
	return q, append(w.args, limit)
}

// dedupe returns the distinct values, sorted.
func dedupe(v []string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return slices.Compact(out)
}
