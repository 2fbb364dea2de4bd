package power_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// fakeBMC is a driver whose machines sit behind BMCs named by the
// "bmc" parameter; it records overlapping commands per BMC.
type fakeBMC struct {
	mu       sync.Mutex
	on       map[string]bool
	active   map[string]int
	overlaps int
	calls    atomic.Int64
	failures atomic.Int64 // fail this many commands with Unreachable
	delay    time.Duration
}

func newFake() *fakeBMC {
	return &fakeBMC{on: map[string]bool{}, active: map[string]int{}, delay: 2 * time.Millisecond}
}

func (f *fakeBMC) Name() string                     { return "fake" }
func (f *fakeBMC) Validate(map[string]string) error { return nil }
func (f *fakeBMC) BMC(p map[string]string) (power.BMC, error) {
	return power.BMC{Type: "fake", Address: p["bmc"], System: p["id"]}, nil
}

func (f *fakeBMC) do(p map[string]string, fn func()) error {
	f.calls.Add(1)
	f.mu.Lock()
	f.active[p["bmc"]]++
	if f.active[p["bmc"]] > 1 {
		f.overlaps++
	}
	f.mu.Unlock()
	time.Sleep(f.delay)
	f.mu.Lock()
	f.active[p["bmc"]]--
	fn()
	f.mu.Unlock()
	if f.failures.Add(-1) >= 0 {
		return &power.Error{Kind: power.Unreachable, Op: "test", Err: errors.New("no answer")}
	}
	return nil
}

func (f *fakeBMC) PowerOn(_ context.Context, p map[string]string) error {
	return f.do(p, func() { f.on[p["id"]] = true })
}
func (f *fakeBMC) PowerOff(_ context.Context, p map[string]string, _ bool) error {
	return f.do(p, func() { f.on[p["id"]] = false })
}
func (f *fakeBMC) PowerCycle(_ context.Context, p map[string]string) error {
	return f.do(p, func() { f.on[p["id"]] = true })
}
func (f *fakeBMC) SetBootDevice(_ context.Context, p map[string]string, _ power.BootDevice) error {
	return f.do(p, func() {})
}
func (f *fakeBMC) Query(_ context.Context, p map[string]string) (machine.PowerState, error) {
	var st machine.PowerState
	err := f.do(p, func() {
		st = machine.PowerOff
		if f.on[p["id"]] {
			st = machine.PowerOn
		}
	})
	return st, err
}

type results struct {
	mu  sync.Mutex
	got []power.Result
}

func (r *results) PowerResult(_ context.Context, res power.Result) power.Record {
	return power.Record{Done: func(machine.Machine, *store.PowerRequest) {
		r.mu.Lock()
		r.got = append(r.got, res)
		r.mu.Unlock()
	}}
}

func (r *results) all() []power.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]power.Result(nil), r.got...)
}

func setup(t *testing.T, f *fakeBMC, machines, perBMC int) (store.Store, []machine.Machine) {
	return setupDB(t, "", f, machines, perBMC)
}

func setupDB(t *testing.T, dbURL string, f *fakeBMC, machines, perBMC int) (store.Store, []machine.Machine) {
	t.Helper()
	st := openStore(t, dbURL)
	var ms []machine.Machine
	for i := 0; i < machines; i++ {
		m := machine.Machine{
			Hostname: fmt.Sprintf("m%d", i), Architecture: "amd64/generic", PowerType: "fake",
			PowerParams: map[string]string{"bmc": fmt.Sprintf("chassis%d", i/perBMC), "id": fmt.Sprintf("m%d", i)},
			Interfaces:  []machine.Interface{{Name: "eth0", MAC: fmt.Sprintf("52:54:00:00:10:%02x", i)}},
		}
		if err := st.CreateMachine(context.Background(), &m, nil); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return st, ms
}

func startCoordinator(t *testing.T, st store.Store, f *fakeBMC, rep power.Reporter, cfg power.Config) *power.Coordinator {
	c := power.NewCoordinator(st, power.NewRegistry(f), rep, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// TestSerialisedPerBMC: a burst of requests from many callers for several
// machines on one chassis BMC runs one command at a time, coalesces equal
// requests, loses none, and every result is reported once.
func TestSerialisedPerBMC(t *testing.T) {
	f := newFake()
	st, ms := setup(t, f, 6, 3) // two chassis of three machines
	rep := &results{}
	c := startCoordinator(t, st, f, rep, power.Config{Workers: 8, Backoff: []time.Duration{time.Millisecond}})
	var wg sync.WaitGroup
	ids := sync.Map{}
	for i := 0; i < 120; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			m := ms[i%len(ms)]
			action := machine.PowerUp
			if i%4 == 3 {
				action = machine.PowerDown
			}
			r, _, err := c.Submit(context.Background(), m, action, "t", "")
			if err != nil {
				t.Error(err)
				return
			}
			ids.Store(r.ID, true)
		}(i)
	}
	wg.Wait()
	var all []string
	ids.Range(func(k, _ any) bool { all = append(all, k.(string)); return true })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range all {
		r, err := c.Wait(ctx, id)
		if err != nil || r.State != store.PowerDone {
			t.Fatalf("request %s: %+v %v", id, r, err)
		}
	}
	if f.overlaps != 0 {
		t.Fatalf("%d commands overlapped on one BMC", f.overlaps)
	}
	if len(all) >= 120 {
		t.Fatalf("no coalescing: %d requests for 120 asks", len(all))
	}
	rep.mu.Lock()
	defer rep.mu.Unlock()
	if len(rep.got) != len(all) {
		t.Fatalf("%d results reported for %d requests", len(rep.got), len(all))
	}
}

// TestRetriesThenFails: an unreachable BMC is retried a bounded number of
// times; the request then fails with its reason and the queue moves on.
func TestRetriesThenFails(t *testing.T) {
	f := newFake()
	st, ms := setup(t, f, 1, 1)
	c := startCoordinator(t, st, f, nil, power.Config{Workers: 2, Attempts: 2, Backoff: []time.Duration{time.Millisecond}})
	f.failures.Store(1000)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := c.Do(ctx, ms[0], machine.PowerUp, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != store.PowerFailed || r.ErrorKind != string(power.Unreachable) || r.Attempts != 1 {
		t.Fatalf("got %+v; want failed, unreachable", r)
	}
	if calls := f.calls.Load(); calls != 2 {
		t.Fatalf("%d BMC calls, want 2 attempts", calls)
	}
	f.failures.Store(0)
	r, err = c.Do(ctx, ms[0], machine.PowerDown, "t", "")
	if err != nil || r.State != store.PowerDone || r.ResultState != "off" {
		t.Fatalf("the next request after a failure: %+v %v", r, err)
	}
}

// TestTwoRegionsShareTheQueue: two coordinators on one database (two
// regions) never overlap commands on a BMC, on SQLite and PostgreSQL.
func TestTwoRegionsShareTheQueue(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { twoRegions(t, "") })
	t.Run("postgres", func(t *testing.T) { twoRegions(t, pgtest.URL(t)) })
}

func twoRegions(t *testing.T, dbURL string) {
	f := newFake()
	st, ms := setupDB(t, dbURL, f, 8, 4)
	a := startCoordinator(t, st, f, nil, power.Config{Workers: 4, Backoff: []time.Duration{time.Millisecond}})
	b := startCoordinator(t, st, f, nil, power.Config{Workers: 4, Backoff: []time.Duration{time.Millisecond}})
	var ids []string
	for i, m := range ms {
		c := a
		if i%2 == 1 {
			c = b
		}
		for _, act := range []machine.PowerAction{machine.PowerUp, machine.PowerDown, power.QueryAction} {
			r, _, err := c.Submit(context.Background(), m, act, "t", "")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range ids {
		if r, err := b.Wait(ctx, id); err != nil || r.State != store.PowerDone {
			t.Fatalf("%s: %+v %v", id, r, err)
		}
	}
	if f.overlaps != 0 {
		t.Fatalf("%d overlapping commands across two regions", f.overlaps)
	}
}

// countingQueue counts the enqueues that reach the database.
type countingQueue struct {
	store.Store
	enqueues atomic.Int64
}

func (q *countingQueue) EnqueuePower(ctx context.Context, r store.PowerRequest) (store.PowerRequest, bool, error) {
	q.enqueues.Add(1)
	return q.Store.EnqueuePower(ctx, r)
}

// TestPendingQueryCoalescedInProcess: while a machine's query waits, more
// queries for it are coalesced without a write; an action goes to the
// database and a query after it is queued behind it; once the query has
// run, the next one is queued afresh.
func TestPendingQueryCoalescedInProcess(t *testing.T) {
	f := newFake()
	st, ms := setup(t, f, 1, 1)
	q := &countingQueue{Store: st}
	c := power.NewCoordinator(q, power.NewRegistry(f), nil, power.Config{Workers: 1, Backoff: []time.Duration{time.Millisecond}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	first, _, err := c.Submit(ctx, ms[0], power.QueryAction, "", "poll")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		r, coalesced, err := c.Submit(ctx, ms[0], power.QueryAction, "", "poll")
		if err != nil || !coalesced || r.ID != first.ID {
			t.Fatalf("query %d: %v, coalesced %v, id %s (first %s)", i, err, coalesced, r.ID, first.ID)
		}
	}
	if n := q.enqueues.Load(); n != 1 {
		t.Fatalf("%d enqueues reached the database, want 1", n)
	}
	if _, _, err := c.Submit(ctx, ms[0], machine.PowerUp, "test", ""); err != nil {
		t.Fatal(err)
	}
	after, _, err := c.Submit(ctx, ms[0], power.QueryAction, "", "poll")
	if err != nil || after.ID == first.ID {
		t.Fatalf("a query after an action was coalesced with the one before it (%v)", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { c.Run(runCtx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	if r, err := c.Wait(ctx, after.ID); err != nil || r.State != store.PowerDone {
		t.Fatalf("query: %+v, %v", r, err)
	}
	next, coalesced, err := c.Submit(ctx, ms[0], power.QueryAction, "", "poll")
	if err != nil || coalesced || next.ID == after.ID {
		t.Fatalf("a query after the last one finished was coalesced with it: %v, %v", coalesced, err)
	}
}

// TestActionsBeforeQueries: a power action queued behind other machines'
// polls, and behind its own machine's, is claimed first; the polls follow
// in arrival order.
func TestActionsBeforeQueries(t *testing.T) {
	for _, name := range []string{"sqlite", "postgresql"} {
		t.Run(name, func(t *testing.T) {
			dbURL := ""
			if name == "postgresql" {
				dbURL = pgtest.URL(t)
			}
			f := newFake()
			st, ms := setupDB(t, dbURL, f, 4, 1)
			c := power.NewCoordinator(st, power.NewRegistry(f), nil, power.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
			ctx := context.Background()
			for _, m := range ms {
				if _, _, err := c.Submit(ctx, m, power.QueryAction, "", "poll"); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, err := c.Submit(ctx, ms[3], machine.PowerUp, "test", ""); err != nil {
				t.Fatal(err)
			}
			var got []string
			for range 5 {
				r, err := st.ClaimPower(ctx, "test", time.Now(), time.Now().Add(time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, r.SystemID[len(r.SystemID)-4:]+":"+r.Action)
				r.State, r.Finished = store.PowerDone, time.Now()
				if err := st.FinishPower(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			want := []string{ms[3].SystemID, ms[0].SystemID, ms[1].SystemID, ms[2].SystemID, ms[3].SystemID}
			for i, a := range []string{"on", "query", "query", "query", "query"} {
				want[i] = want[i][len(want[i])-4:] + ":" + a
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("claimed %v, want %v", got, want)
			}
		})
	}
}
