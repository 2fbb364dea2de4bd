package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// listBudget is a generous bound on listing 10,000 machines: a store that
// queries per machine takes far longer.
const listBudget = 5 * time.Second

// testTenThousandMachines checks that listing a large site stays fast.
func testTenThousandMachines(t *testing.T, s store.Store) {
	if testing.Short() {
		t.Skip("creates 10,000 machines")
	}
	ctx := t.Context()
	if _, err := s.CreateTag(ctx, store.Tag{Name: "even"}); err != nil {
		t.Fatal(err)
	}
	const n, workers = 10000, 8
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				m := newMachine(fmt.Sprintf("node%05d", i), mac(i))
				m.Status, m.Owner = machine.Ready, ""
				if i%2 == 0 {
					m.Tags, m.Owner = []string{"even"}, "alice"
				}
				if err := s.CreateMachine(ctx, m, []machine.Event{{Type: "Created"}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("created %d machines in %s", n, time.Since(start).Round(time.Millisecond))

	timed := func(name string, f store.MachineFilter, want int) []machine.Machine {
		t.Helper()
		start := time.Now()
		ms := list(t, s, f)
		took := time.Since(start)
		t.Logf("%s: %d machines in %s", name, len(ms), took.Round(time.Millisecond))
		if len(ms) != want {
			t.Fatalf("%s: %d machines, want %d", name, len(ms), want)
		}
		if took > listBudget {
			t.Fatalf("%s took %s, over %s", name, took, listBudget)
		}
		return ms
	}
	ms := timed("all", store.MachineFilter{}, n)
	if ms[0].Hostname != "node00000" || ms[n-1].Hostname != fmt.Sprintf("node%05d", n-1) ||
		len(ms[1234].Interfaces) != 1 || ms[1234].Interfaces[0].MAC != mac(1234) {
		t.Fatal("large list is out of order or missing interfaces")
	}
	timed("all with power", store.MachineFilter{WithPowerParams: true}, n)
	timed("tagged", store.MachineFilter{Tags: []string{"even"}}, n/2)
	timed("visible to bob", store.MachineFilter{VisibleTo: "bob"}, n/2)
	timed("by mac", store.MachineFilter{MACs: []string{mac(4321)}}, 1)
	timed("by hostname", store.MachineFilter{Hostnames: []string{"node09999"}}, 1)

	start = time.Now()
	for i := range 100 {
		get(t, s, ms[i*97].SystemID)
	}
	t.Logf("100 GetMachine calls in %s", time.Since(start).Round(time.Millisecond))
}
