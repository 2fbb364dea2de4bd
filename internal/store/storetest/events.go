package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

func queryEvents(t *testing.T, s store.Store, f store.EventFilter) []machine.Event {
	t.Helper()
	evs, err := s.QueryEvents(t.Context(), f)
	if err != nil {
		t.Fatalf("QueryEvents(%+v): %v", f, err)
	}
	return evs
}

func eventTypes(evs []machine.Event) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func testAppendAndQueryEvents(t *testing.T, s store.Store) {
	ctx := t.Context()
	if id, err := s.LastEventID(ctx); err != nil || id != 0 {
		t.Fatalf("LastEventID on an empty store = %d, %v", id, err)
	}
	if err := s.AppendEvents(ctx); err != nil {
		t.Fatalf("AppendEvents of nothing: %v", err)
	}
	in := []machine.Event{
		{SystemID: "aaaaaa", Hostname: "a", Type: "one", Level: machine.LevelInfo, Description: "first", User: "alice", Created: ts(1)},
		{SystemID: "bbbbbb", Hostname: "b", Type: "two", Level: machine.LevelError, Description: "second", Created: ts(2)},
		{Type: "three", Level: machine.LevelDebug}, // no machine, no time
	}
	before := time.Now().Add(-time.Second)
	if err := s.AppendEvents(ctx, in...); err != nil {
		t.Fatal(err)
	}
	evs := queryEvents(t, s, store.EventFilter{})
	equalStrings(t, "newest first", eventTypes(evs), []string{"three", "two", "one"})
	if !(evs[0].ID > evs[1].ID && evs[1].ID > evs[2].ID && evs[2].ID > 0) {
		t.Fatalf("IDs not increasing in append order: %d %d %d", evs[2].ID, evs[1].ID, evs[0].ID)
	}
	want := in[0]
	want.ID = evs[2].ID
	if evs[2] != want {
		t.Fatalf("event read back as %+v, want %+v", evs[2], want)
	}
	if evs[0].Created.Before(before) || evs[0].Created.Location() != time.UTC {
		t.Fatalf("zero Created stored as %v, want now in UTC", evs[0].Created)
	}
	if id, err := s.LastEventID(ctx); err != nil || id != evs[0].ID {
		t.Fatalf("LastEventID = %d, %v; want %d", id, err, evs[0].ID)
	}
	equalStrings(t, "ascending", eventTypes(queryEvents(t, s, store.EventFilter{Ascending: true})), []string{"one", "two", "three"})
}

func testEventFilters(t *testing.T, s store.Store) {
	ctx := t.Context()
	ms := fixture(t, s) // b-node: z1, alice; c-node: z1, bob
	a, b, c := ms["a-node"], ms["b-node"], ms["c-node"]
	ev := func(m *machine.Machine, typ string, l machine.Level) machine.Event {
		return machine.Event{SystemID: m.SystemID, Hostname: m.Hostname, Type: typ, Level: l}
	}
	if err := s.AppendEvents(ctx,
		ev(a, "a-debug", machine.LevelDebug), ev(b, "b-info", machine.LevelInfo), ev(c, "c-warn", machine.LevelWarning),
		ev(a, "a-error", machine.LevelError), ev(b, "b-audit", machine.LevelAudit), ev(c, "c-crit", machine.LevelCritical),
		machine.Event{SystemID: "gone00", Hostname: "gone", Type: "gone-info", Level: machine.LevelInfo},
	); err != nil {
		t.Fatal(err)
	}
	all := queryEvents(t, s, store.EventFilter{Ascending: true})
	if len(all) != 7 {
		t.Fatalf("%d events, want 7", len(all))
	}
	id := func(typ string) int64 {
		for _, e := range all {
			if e.Type == typ {
				return e.ID
			}
		}
		t.Fatalf("no event %s", typ)
		return 0
	}
	cases := []struct {
		name string
		f    store.EventFilter
		want []string
	}{
		{"hostnames", store.EventFilter{Hostnames: []string{"a-node", "gone"}}, []string{"gone-info", "a-error", "a-debug"}},
		{"system ids", store.EventFilter{SystemIDs: []string{c.SystemID}}, []string{"c-crit", "c-warn"}},
		{"zones", store.EventFilter{Zones: []string{"z1"}}, []string{"c-crit", "b-audit", "c-warn", "b-info"}},
		{"owner", store.EventFilter{Owner: "alice"}, []string{"b-audit", "b-info"}},
		{"min info", store.EventFilter{MinLevel: machine.LevelInfo, Ascending: true},
			[]string{"b-info", "c-warn", "a-error", "b-audit", "c-crit", "gone-info"}},
		{"min error", store.EventFilter{MinLevel: machine.LevelError}, []string{"c-crit", "a-error"}},
		{"before", store.EventFilter{BeforeID: id("c-warn")}, []string{"b-info", "a-debug"}},
		{"after", store.EventFilter{AfterID: id("b-audit"), Ascending: true}, []string{"c-crit", "gone-info"}},
		{"window", store.EventFilter{AfterID: id("a-debug"), BeforeID: id("a-error")}, []string{"c-warn", "b-info"}},
		{"combined", store.EventFilter{Zones: []string{"z1"}, MinLevel: machine.LevelWarning, Limit: 1}, []string{"c-crit"}},
		{"hostile", store.EventFilter{Owner: "' OR 1=1 --"}, nil},
		{"skip type prefix", store.EventFilter{SkipTypePrefix: "a-", MinLevel: machine.LevelWarning}, []string{"c-crit", "c-warn"}},
		{"skip a type prefix like a pattern", store.EventFilter{SkipTypePrefix: "%", SystemIDs: []string{c.SystemID}}, []string{"c-crit", "c-warn"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			equalStrings(t, "events", eventTypes(queryEvents(t, s, tc.f)), tc.want)
		})
	}
}

func testEventLimits(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 1100
	evs := make([]machine.Event, n)
	for i := range evs {
		evs[i] = machine.Event{Type: fmt.Sprint(i), Level: machine.LevelInfo, Created: ts(0)}
	}
	if err := s.AppendEvents(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ limit, want int }{{0, 100}, {-1, 100}, {7, 7}, {1000, 1000}, {5000, 1000}} {
		got := queryEvents(t, s, store.EventFilter{Limit: tc.limit})
		if len(got) != tc.want {
			t.Fatalf("limit %d gave %d events, want %d", tc.limit, len(got), tc.want)
		}
		if got[0].Type != fmt.Sprint(n-1) {
			t.Fatalf("limit %d: first event is %s, want the newest", tc.limit, got[0].Type)
		}
	}
	// Paging backwards with BeforeID visits every event once.
	seen, before := 0, int64(0)
	for {
		page := queryEvents(t, s, store.EventFilter{BeforeID: before, Limit: 300})
		if len(page) == 0 {
			break
		}
		seen += len(page)
		before = page[len(page)-1].ID
	}
	if seen != n {
		t.Fatalf("paging saw %d events, want %d", seen, n)
	}
}
