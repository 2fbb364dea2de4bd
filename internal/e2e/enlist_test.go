package e2e

import (
	"context"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEnlistment racks QEMU machines behind ipmi_sim BMCs and shows the
// known-machine check, enlistment and commissioning end to end:
//
//  1. an unknown machine powered on at its BMC auto-enlists as NEW with
//     all its MACs and the BMC it read in-band, and powers off;
//  2. a machine added with only its IPMI credentials, hostname and zone
//     is booted by Anvil through its BMC, matched by the BMC its
//     environment reads in-band, commissioned, and ends READY and off
//     with its MACs and inventory;
//  3. a DEPLOYING machine that boots the enlistment environment (from a
//     NIC Anvil does not know yet) is told to reboot, Anvil reboots it
//     into its own boot through the BMC, and the timeline says so;
//  4. a machine known by one NIC that boots from its other NIC is
//     recognised: no second machine, the NIC is learned.
func TestEnlistment(t *testing.T) {
	t.Parallel() // its machines boot in a namespace of their own
	s := newSite(t, []string{"tapA0", "tapA1", "tapB0", "tapB1", "tapB2", "tapD0", "tapD1"}, nil)
	long := 5 * time.Minute

	// 1. Auto-enlistment.
	a := s.machineAt("vmA", "192.0.2.21", "02:00:00:00:00:21", "6f2c1f1e-0000-4000-8000-0000000000a1",
		[]string{"52:54:00:0e:00:a1", "52:54:00:0e:00:a2"}, []string{"tapA0", "tapA1"}, 0)
	if err := a.Machine().SetBootDevice("network", true, false); err != nil {
		t.Fatal(err)
	}
	clock := watchStages(a.Serial())
	s.ipmitool("192.0.2.21", "chassis", "power", "on")
	var enlisted apiMachine
	s.waitFor("machine A to enlist", long, func() bool {
		for _, m := range s.machines() {
			if slices.Contains(m.macs(), "52:54:00:0e:00:a1") {
				enlisted = m
				return true
			}
		}
		return false
	})
	clock.mark("new")
	s.waitFor("machine A to power itself off", 2*time.Minute, func() bool { return !a.Running() })
	clock.mark("off")
	if os.Getenv("E2E_DEBUG") != "" {
		t.Log("power on at", clock.start.UTC().Format("15:04:05.000"))
		for _, l := range strings.Split(s.log.String(), "\n") {
			if strings.Contains(l, "dhcp: ") {
				t.Log(l)
			}
		}
		t.Log(s.events(enlisted.SystemID))
		page, _ := s.cl.Do(context.Background(), "GET", "discoveries/", nil, nil)
		t.Log(string(page))
	}
	t.Log(clock.report("power-on to NEW", "firmware", "dhcp", "loader", "kernel", "agent", "new", "done", "off"))
	enlisted = s.machine(enlisted.SystemID)
	if enlisted.StatusName != "New" || len(enlisted.macs()) != 2 || !slices.Contains(enlisted.macs(), "52:54:00:0e:00:a2") {
		t.Fatalf("enlisted machine: %+v", enlisted)
	}
	if ev := s.events(enlisted.SystemID); !strings.Contains(ev, "ipmi BMC at 192.0.2.21 has the user anvil, created in-band") {
		t.Fatalf("the enlisted machine's BMC did not get Anvil's user:\n%s", ev)
	}
	// The user the environment created in-band works over the LAN, with
	// the password only Anvil knows.
	var params map[string]string
	s.api("GET", "machines/"+enlisted.SystemID+"/", url.Values{"op": {"power_parameters"}}, &params)
	if enlisted.PowerType != "ipmi" || params["power_user"] != "anvil" || len(params["power_pass"]) != 16 || params["power_address"] != "192.0.2.21" {
		t.Fatalf("enlisted machine's power: %s %v", enlisted.PowerType, params)
	}
	if out := s.ipmitoolAs("192.0.2.21", "anvil", params["power_pass"], "chassis", "power", "status"); !strings.Contains(out, "off") {
		t.Fatalf("ipmitool as anvil: %s", out)
	}
	if got := len(s.machines()); got != 1 {
		t.Fatalf("%d machines after one enlistment", got)
	}

	// 2. Added by its BMC alone.
	b := s.machineAt("vmB", "192.0.2.22", "02:00:00:00:00:22", "6f2c1f1e-0000-4000-8000-0000000000b1",
		[]string{"52:54:00:0e:00:b1", "52:54:00:0e:00:b2"}, []string{"tapB0", "tapB1"}, 64)
	s.api("POST", "zones/", url.Values{"name": {"row-b"}}, nil)
	form := s.ipmiParams(b)
	form.Set("hostname", "row-b-u12")
	form.Set("zone", "row-b")
	var added apiMachine
	clock = watchStages(b.Serial())
	s.api("POST", "machines/", form, &added)
	ready := s.waitStatus(added.SystemID, "Ready", long, b)
	clock.mark("ready")
	s.waitFor("machine B to be off", 2*time.Minute, func() bool { return !b.Running() })
	clock.mark("off")
	t.Log(clock.report("BMC-only add to READY", "firmware", "dhcp", "loader", "kernel", "agent", "done", "ready", "off"))
	if ready.Hostname != "row-b-u12" || ready.Zone.Name != "row-b" || len(ready.macs()) != 2 ||
		ready.CPUCount < 1 || ready.Memory < 256 || ready.Storage < 60 || ready.HardwareInfo["bmc_address"] != "192.0.2.22" {
		t.Fatalf("commissioned machine: %+v", ready)
	}
	if got := len(s.machines()); got != 2 {
		t.Fatalf("%d machines after the BMC-only add", got)
	}

	// 2b. Scripts and tags on the commissioned machine: an XPath tag over
	// its real lshw output (and one that does not match), commissioning
	// with an uploaded script run once per disk, then a testing script
	// that fails, and the override.
	s.scriptsAndTags(added.SystemID, b)

	// 3. A deploying machine boots the enlistment environment: its BMC
	// now fronts it with a new first NIC Anvil has never seen.
	b.Close()
	b2 := s.machineAt("vmB", "192.0.2.22", "02:00:00:00:00:22", "6f2c1f1e-0000-4000-8000-0000000000b1",
		[]string{"52:54:00:0e:00:b3", "52:54:00:0e:00:b1", "52:54:00:0e:00:b2"}, []string{"tapB2", "tapB0", "tapB1"}, 64)
	s.api("POST", "machines/", url.Values{"op": {"allocate"}, "system_id": {added.SystemID}}, nil)
	s.deployVanishing(added.SystemID)
	// The proper boot reaches the install environment, which has no
	// image to write yet in this test: the phase ends failed, and the
	// timeline shows the wrong boot and the redirect.
	s.waitStatus(added.SystemID, "Failed deployment", long, b2)
	ev := s.events(added.SystemID)
	for _, want := range []string{
		"learned interface(s) 52:54:00:0e:00:b3",
		"booted the enlist environment instead of install: told to reboot; its next boot is set to install",
		"The install environment checked in with its own boot: proceeding with deploying",
	} {
		if !strings.Contains(ev, want) {
			t.Fatalf("timeline lacks %q:\n%s", want, ev)
		}
	}

	// 4. Known by one NIC, booting from the other.
	d := s.machineAt("vmD", "192.0.2.23", "02:00:00:00:00:23", "6f2c1f1e-0000-4000-8000-0000000000d1",
		[]string{"52:54:00:0e:00:d2", "52:54:00:0e:00:d1"}, []string{"tapD0", "tapD1"}, 0)
	if err := d.Machine().SetBootDevice("network", true, false); err != nil {
		t.Fatal(err)
	}
	form = s.ipmiParams(d)
	form.Set("hostname", "row-d-u1")
	form.Set("mac_addresses", "52:54:00:0e:00:d1")
	var known apiMachine
	s.api("POST", "machines/", form, &known)
	s.api("POST", "machines/"+known.SystemID+"/", url.Values{"op": {"power_on"}}, nil)
	s.waitFor("machine D to be recognised", long, func() bool {
		return slices.Contains(s.machine(known.SystemID).macs(), "52:54:00:0e:00:d2")
	})
	s.waitFor("machine D to power itself off", 2*time.Minute, func() bool { return !d.Running() })
	if got := len(s.machines()); got != 3 {
		t.Fatalf("%d machines: the second NIC's boot enlisted a duplicate", got)
	}
	if ev := s.events(known.SystemID); !strings.Contains(ev, "known, told to power off") {
		t.Fatalf("timeline of D:\n%s", ev)
	}
}
