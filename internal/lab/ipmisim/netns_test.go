package ipmisim

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power/ipmi"
	"github.com/anvilmetal/anvil/internal/testutil/netns"
)

// TestNetns: the BMC on 192.0.2.21:623 inside a namespace, its machine on
// a tap of the namespace's bridge, as a lab fleet lays them out.
func TestNetns(t *testing.T) {
	needTools(t)
	ns := netns.New(t, fmt.Sprintf("ipmisim%d", os.Getpid()))
	ns.Bridge("br0", "192.0.2.1/24", "tap21")
	ns.Ip("addr", "add", "192.0.2.21/24", "dev", "br0")

	q := qemuConfig()
	q.NetDevs = []string{"tap21"}
	b := start(t, Config{Netns: ns.Name, Addr: "192.0.2.21", QEMU: q})
	if p := b.Params()[ipmi.ParamAddress]; p != "192.0.2.21:623" {
		t.Fatalf("power_address %s", p)
	}
	lan := ipmitool(t, b, "lan", "print", "1")
	if !regexp.MustCompile(`IP Address\s+: 192\.0\.2\.21\n`).MatchString(lan) || !strings.Contains(lan, testMAC) {
		t.Fatalf("lan print 1:\n%s", lan)
	}

	// Anvil's driver, its socket in the namespace.
	d := ipmi.Driver{}
	in := func(f func(ctx context.Context) error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ns.Do(func() error { return f(ctx) }); err != nil {
			t.Fatal(err)
		}
	}
	state := func() machine.PowerState {
		t.Helper()
		var st machine.PowerState
		in(func(ctx context.Context) (err error) { st, err = d.Query(ctx, b.Params()); return err })
		return st
	}
	if st := state(); st != machine.PowerOff {
		t.Fatalf("at start: %s", st)
	}
	in(func(ctx context.Context) error { return d.PowerOn(ctx, b.Params()) })
	if !b.Running() || state() != machine.PowerOn {
		t.Fatal("not on after power on")
	}
	waitFor(t, "in-band connection", 15*time.Second, func() bool { return chardevConnected(b) })
	if c := cmdline(b.Machine().Pid()); !strings.Contains(c, "ifname=tap21") {
		t.Fatalf("qemu command line: %s", c)
	}
	in(func(ctx context.Context) error { return d.PowerOff(ctx, b.Params(), false) })
	if b.Running() || state() != machine.PowerOff {
		t.Fatal("on after power off")
	}
}
