package sqlstore

import (
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

func TestNumberPlaceholders(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                          "SELECT 1",
		"a = ? AND b IN (?, ?)":             "a = $1 AND b IN ($2, $3)",
		"x = '?' AND y = ? OR z = 'it''s?'": "x = '?' AND y = $1 OR z = 'it''s?'",
	} {
		if got := numberPlaceholders(in); got != want {
			t.Errorf("numberPlaceholders(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRandomString(t *testing.T) {
	seen := map[byte]int{}
	for range 2000 {
		s := randomString(systemIDLength, systemIDAlphabet)
		if len(s) != systemIDLength {
			t.Fatalf("length %d", len(s))
		}
		for i := range len(s) {
			if !strings.ContainsRune(systemIDAlphabet, rune(s[i])) {
				t.Fatalf("%q has %q, outside the alphabet", s, s[i])
			}
			seen[s[i]]++
		}
	}
	if len(seen) != len(systemIDAlphabet) {
		t.Fatalf("only %d of %d characters ever drawn", len(seen), len(systemIDAlphabet))
	}
	if a, b := randomString(32, alphanumerics), randomString(32, alphanumerics); a == b {
		t.Fatal("two random strings are equal")
	}
}

// TestFilterArgsMatchPlaceholders guards the builder: every condition must
// bring exactly as many arguments as it has placeholders, and user values
// must never reach the SQL text.
func TestFilterArgsMatchPlaceholders(t *testing.T) {
	const marker = "INJECT'--"
	f := store.MachineFilter{
		SystemIDs: []string{marker, "b"}, Hostnames: []string{marker}, MACs: []string{marker, "m2"},
		Statuses: []machine.Status{machine.Ready}, Zones: []string{marker}, Pools: []string{marker},
		Owners: []string{marker}, Arch: marker, Tags: []string{marker, "t2", marker}, NotTags: []string{marker},
		MinCPU: 2, MinMemory: 1024, VisibleTo: marker,
	}
	w := machineWhere(f)
	check := func(name, sql string, args []any) {
		t.Helper()
		if n := strings.Count(sql, "?"); n != len(args) {
			t.Errorf("%s: %d placeholders, %d arguments", name, n, len(args))
		}
		if strings.Contains(sql, "INJECT") {
			t.Errorf("%s: a user value is in the SQL text", name)
		}
	}
	check("machine filter", w.sql(), w.args)
	// Every field filters, and machines are told from devices; with the
	// arch exception of 2 conditions in 1.
	if len(w.conds) != 14 {
		t.Errorf("%d conditions, want 14", len(w.conds))
	}
	dw := deviceWhere(store.DeviceFilter{SystemIDs: []string{marker}, Hostnames: []string{marker}, MACs: []string{marker},
		Domains: []string{marker}, Zones: []string{marker}, Owners: []string{marker}, Parents: []string{marker}, VisibleTo: marker})
	check("device filter", dw.sql(), dw.args)
	if len(dw.conds) != 9 {
		t.Errorf("%d device conditions, want 9", len(dw.conds))
	}
	q, args := eventQuery(store.EventFilter{
		Hostnames: []string{marker}, SystemIDs: []string{marker}, Zones: []string{marker},
		MinLevel: machine.LevelWarning, Owner: marker, BeforeID: 9, AfterID: 2, Limit: 5,
	})
	check("event filter", q, args)
	if got := machineWhere(store.MachineFilter{}).sql(); got != " WHERE m.node_type = 0" {
		t.Errorf("an empty filter has conditions: %q", got)
	}
}

func TestEventLimit(t *testing.T) {
	for limit, want := range map[int]int{0: 100, -5: 100, 1: 1, 1000: 1000, 1001: 1000} {
		_, args := eventQuery(store.EventFilter{Limit: limit})
		if got := args[len(args)-1]; got != want {
			t.Errorf("limit %d became %v, want %d", limit, got, want)
		}
	}
}
