package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/fleet"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/power/ipmi"
	"github.com/anvilmetal/anvil/internal/power/redfish"
)

// TestFleetAnswersAnvilsDrivers: every machine of a mixed fleet can be
// powered on and queried with the parameters the fleet hands out.
func TestFleetAnswersAnvilsDrivers(t *testing.T) {
	log := &lab.Log{}
	f, err := fleet.Start(fleet.Config{IPMI: 5, RedfishChassis: 2, SystemsPerChassis: 3, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Machines) != 11 {
		t.Fatalf("%d machines, want 11", len(f.Machines))
	}
	reg := power.NewRegistry(ipmi.Driver{}, redfish.Driver{})
	for _, m := range f.Machines {
		d, err := reg.Lookup(m.PowerType)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(m.Params); err != nil {
			t.Fatalf("%s: %v", m.Hostname, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := power.Carry(ctx, d, m.Params, machine.PowerUp, []time.Duration{10 * time.Millisecond})
		cancel()
		if err != nil || st != machine.PowerOn || !m.Sim.IsOn() {
			t.Fatalf("%s (%s): power on gave %s %v", m.Hostname, m.PowerType, st, err)
		}
	}
	if len(log.Entries()) == 0 {
		t.Fatal("the fleet's log recorded nothing")
	}
}

func TestFleetFaults(t *testing.T) {
	f, err := fleet.Start(fleet.Config{IPMI: 50, DeadShare: 0.2, SlowShare: 0.2, SlowDelay: time.Second, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[string]int{}
	for _, m := range f.Machines {
		kinds[m.Faults]++
	}
	if kinds["dead"] == 0 || kinds["slow"] == 0 || kinds[""] == 0 {
		t.Fatalf("fault mix %v", kinds)
	}
}
