package power

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
)

// slowDriver records overlapping commands per machine.
type slowDriver struct {
	mu       sync.Mutex
	active   map[string]int
	state    map[string]machine.PowerState
	overlaps int
	calls    atomic.Int64
}

func (d *slowDriver) Name() string                     { return "slow" }
func (d *slowDriver) Validate(map[string]string) error { return nil }
func (d *slowDriver) BMC(p map[string]string) (BMC, error) { return BMC{Type: "slow", Address: p["id"]}, nil }
func (d *slowDriver) PowerOn(ctx context.Context, p map[string]string) error {
	return d.run(p["id"])
}
func (d *slowDriver) PowerOff(ctx context.Context, p map[string]string, soft bool) error {
	return d.run(p["id"])
}
func (d *slowDriver) PowerCycle(ctx context.Context, p map[string]string) error { return d.run(p["id"]) }
func (d *slowDriver) SetBootDevice(ctx context.Context, p map[string]string, b BootDevice) error {
	return d.run(p["id"])
}
func (d *slowDriver) Query(ctx context.Context, p map[string]string) (machine.PowerState, error) {
	d.mu.Lock()
	st := d.state[p["id"]]
	d.mu.Unlock()
	return st, d.run(p["id"])
}
func (d *slowDriver) run(id string) error {
	d.calls.Add(1)
	d.mu.Lock()
	d.active[id]++
	if d.active[id] > 1 {
		d.overlaps++
	}
	d.mu.Unlock()
	time.Sleep(2 * time.Millisecond)
	d.mu.Lock()
	d.active[id]--
	d.mu.Unlock()
	return nil
}

type countReporter struct{ n atomic.Int64 }

func (r *countReporter) PowerResult(context.Context, Result) { r.n.Add(1) }

func TestCoordinatorSerialisesAndCoalesces(t *testing.T) {
	d := &slowDriver{active: map[string]int{}, state: map[string]machine.PowerState{}}
	rep := &countReporter{}
	c := NewCoordinator(NewRegistry(d), rep, time.Second)
	m := machine.Machine{SystemID: "abc", PowerType: "slow", PowerParams: map[string]string{"id": "abc"}}

	var wg sync.WaitGroup
	ids := make(chan string, 200)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			action := machine.PowerUp
			if i%2 == 1 {
				action = machine.PowerDown
			}
			r, err := c.Submit(m, action, "t", "")
			if err != nil {
				t.Error(err)
				return
			}
			ids <- r.ID
		}(i)
	}
	wg.Wait()
	close(ids)
	distinct := map[string]bool{}
	for id := range ids {
		distinct[id] = true
	}
	c.Stop()
	if d.overlaps != 0 {
		t.Fatalf("%d overlapping commands on one machine", d.overlaps)
	}
	// Coalescing: far fewer requests than asks, and every request reported.
	if len(distinct) >= 200 || len(distinct) < 2 {
		t.Fatalf("got %d distinct requests for 200 asks", len(distinct))
	}
	if got := rep.n.Load(); got != int64(len(distinct)) {
		t.Fatalf("reported %d results for %d requests", got, len(distinct))
	}
}

func TestManualCannotBeQueried(t *testing.T) {
	c := NewCoordinator(NewRegistry(Manual{}), nil, time.Second)
	defer c.Stop()
	m := machine.Machine{SystemID: "m1", PowerType: "manual"}
	res, err := c.Do(context.Background(), m, QueryAction, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.State != machine.PowerUnknown || res.Err == nil {
		t.Fatalf("manual query: state %s err %v; want unknown and ErrUnsupported", res.State, res.Err)
	}
	if _, err := c.Submit(machine.Machine{SystemID: "x", PowerType: "nope"}, machine.PowerUp, "", ""); err == nil {
		t.Fatal("unknown power type accepted")
	}
	if err := (Manual{}).Validate(map[string]string{"power_address": "1.2.3.4"}); err == nil {
		t.Fatal("manual accepted parameters")
	}
}
