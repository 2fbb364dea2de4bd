package e2e

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestLoopGuard: a deploying machine whose proper boot keeps failing, so
// that it lands in the enlistment environment again and again, fails its
// deployment with the reason after three wrong boots instead of
// rebooting forever. The proper boot fails here because the rack that
// serves the machine's network is cut off from the region: it never
// hears of the NIC the region learned, and keeps answering that NIC with
// the default (enlistment) config, as a rack with a stale view would.
func TestLoopGuard(t *testing.T) {
	t.Parallel() // its machines boot in a namespace of their own
	p := &partition{}
	s := newSite(t, []string{"tapE0", "tapE1", "tapE2"}, p)
	long := 5 * time.Minute

	// A machine known by one NIC commissions normally.
	e := s.machineAt("vmE", "192.0.2.24", "02:00:00:00:00:24", "6f2c1f1e-0000-4000-8000-0000000000e1",
		[]string{"52:54:00:0e:00:e1"}, []string{"tapE0"}, 16)
	form := s.ipmiParams(e)
	form.Set("hostname", "row-e-u1")
	form.Set("mac_addresses", "52:54:00:0e:00:e1")
	form.Set("commission", "true")
	var m apiMachine
	s.api("POST", "machines/", form, &m)
	s.waitStatus(m.SystemID, "Ready", long, e)
	s.waitFor("machine E to be off", 2*time.Minute, func() bool { return !e.Running() })

	// Its BMC now fronts it with a new first NIC, and its rack loses the
	// region.
	e.Close()
	e2 := s.machineAt("vmE", "192.0.2.24", "02:00:00:00:00:24", "6f2c1f1e-0000-4000-8000-0000000000e1",
		[]string{"52:54:00:0e:00:e3", "52:54:00:0e:00:e1"}, []string{"tapE1", "tapE2"}, 16)
	p.Cut()
	s.api("POST", "machines/", url.Values{"op": {"allocate"}, "system_id": {m.SystemID}}, nil)
	s.deployVanishing(m.SystemID)
	t0 := time.Now()
	failed := s.waitStatus(m.SystemID, "Failed deployment", 8*time.Minute, e2)
	t.Logf("op=deploy to FAILED_DEPLOYMENT after three wrong boots: %.1f s", time.Since(t0).Seconds())
	if !strings.Contains(failed.StatusMsg, "3 wrong boots in a row (last: booted the enlist environment instead of install)") {
		t.Fatalf("status message %q\n%s", failed.StatusMsg, s.events(m.SystemID))
	}
	ev := s.events(m.SystemID)
	for _, want := range []string{"(wrong boot 1 of 3)", "(wrong boot 2 of 3)"} {
		if !strings.Contains(ev, want) {
			t.Fatalf("timeline lacks %q:\n%s", want, ev)
		}
	}
	s.waitFor("machine E to power itself off", 2*time.Minute, func() bool { return !e2.Running() })
	p.Heal()
}
