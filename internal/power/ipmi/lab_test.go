package ipmi_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/ipmibmc"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/power/ipmi"
)

const (
	labUser = "maas"
	labPass = "Lab-Pa55word"
)

// labBMC serves a fresh machine (off, booting from disk) and returns the
// driver parameters that reach it.
func labBMC(t *testing.T, opts ipmibmc.Options) (*lab.SimMachine, *ipmibmc.BMC, map[string]string) {
	t.Helper()
	m := lab.NewSim("node-1", "4c4c4544-0042-3510-8052-b2c04f4b4c31", "52:54:00:aa:bb:01")
	b := ipmibmc.New(m, opts)
	addr, err := b.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return m, b, map[string]string{ipmi.ParamAddress: addr.String(), ipmi.ParamUser: opts.User, ipmi.ParamPass: opts.Password}
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func query(t *testing.T, d ipmi.Driver, p map[string]string) machine.PowerState {
	t.Helper()
	st, err := d.Query(ctxFor(t, 10*time.Second), p)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	return st
}

func TestDriverPower(t *testing.T) {
	for _, drv := range []string{"", ipmi.DriverLAN20, ipmi.DriverLAN15} {
		t.Run("driver="+drv, func(t *testing.T) {
			m, _, p := labBMC(t, ipmibmc.Options{User: labUser, Password: labPass})
			if drv != "" {
				p[ipmi.ParamDriver] = drv
			}
			d := ipmi.Driver{}
			ctx := ctxFor(t, 20*time.Second)
			step := func(name string, err error, wantOn bool) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if m.IsOn() != wantOn {
					t.Fatalf("%s: machine on=%v", name, m.IsOn())
				}
				want := machine.PowerOff
				if wantOn {
					want = machine.PowerOn
				}
				if st := query(t, d, p); st != want {
					t.Fatalf("%s: query says %s", name, st)
				}
			}
			step("start", nil, false)
			step("power on", d.PowerOn(ctx, p), true)
			step("power on again", d.PowerOn(ctx, p), true)
			if got := m.Changes(); !slices.Equal(got, []string{"on"}) {
				t.Fatalf("power on of a machine that is on changed it: %v", got)
			}
			step("cycle", d.PowerCycle(ctx, p), true)
			step("hard off", d.PowerOff(ctx, p, false), false)
			step("hard off again", d.PowerOff(ctx, p, false), false)
			// The lab BMC refuses to cycle a machine that is off (D5h);
			// the driver powers it up instead.
			step("cycle when off", d.PowerCycle(ctx, p), true)
			step("soft off", d.PowerOff(ctx, p, true), false)
			if got, want := m.Changes(), []string{"on", "cycle", "off", "on", "off"}; !slices.Equal(got, want) {
				t.Fatalf("changes %v, want %v", got, want)
			}
		})
	}
}

// racyMachine reports scripted power states before falling back to the
// real ones, to stage a machine that goes off between two commands.
type racyMachine struct {
	*lab.SimMachine
	mu    sync.Mutex
	reads []bool
}

func (m *racyMachine) IsOn() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.reads) > 0 {
		on := m.reads[0]
		m.reads = m.reads[1:]
		return on
	}
	return m.SimMachine.IsOn()
}

// The machine reads as on, then goes off before the cycle arrives, which
// the BMC refuses (D5h): the driver powers it up instead.
func TestDriverCycleRefusedFallsBackToPowerUp(t *testing.T) {
	m := &racyMachine{SimMachine: lab.NewSim("node-2", "4c4c4544-0042-3510-8052-b2c04f4b4c32"), reads: []bool{true, false, false}}
	b := ipmibmc.New(m, ipmibmc.Options{User: labUser, Password: labPass})
	addr, err := b.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p := map[string]string{ipmi.ParamAddress: addr.String(), ipmi.ParamUser: labUser, ipmi.ParamPass: labPass}
	if err := (ipmi.Driver{}).PowerCycle(ctxFor(t, 10*time.Second), p); err != nil {
		t.Fatalf("cycle: %v", err)
	}
	if got := m.Changes(); !slices.Equal(got, []string{"on"}) {
		t.Fatalf("changes %v, want a power up", got)
	}
}

func TestDriverBootDevice(t *testing.T) {
	m, _, p := labBMC(t, ipmibmc.Options{User: labUser, Password: labPass})
	d := ipmi.Driver{}
	for _, c := range []struct {
		bootType string
		dev      power.BootDevice
		wantEFI  bool
	}{
		{"", power.BootDevice{Device: "network"}, false},
		{"", power.BootDevice{Device: "network", EFI: true}, true},
		{"auto", power.BootDevice{Device: "disk", Persistent: true, EFI: true}, true},
		{"efi", power.BootDevice{Device: "disk", Persistent: true}, true},
		{"legacy", power.BootDevice{Device: "network", EFI: true}, false},
	} {
		p[ipmi.ParamBootType] = c.bootType
		if err := d.SetBootDevice(ctxFor(t, 10*time.Second), p, c.dev); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		dev, persistent, efi := m.BootDevice()
		if dev != c.dev.Device || persistent != c.dev.Persistent || efi != c.wantEFI {
			t.Fatalf("%s %+v: machine boots %s persistent=%v efi=%v", c.bootType, c.dev, dev, persistent, efi)
		}
	}
}

func TestDriverAnonymousAndOperator(t *testing.T) {
	m, _, p := labBMC(t, ipmibmc.Options{})
	p[ipmi.ParamPrivilege] = "OPERATOR"
	if err := (ipmi.Driver{}).PowerOn(ctxFor(t, 10*time.Second), p); err != nil || !m.IsOn() {
		t.Fatalf("anonymous operator power on: %v", err)
	}
}

func TestDriverLogsCommands(t *testing.T) {
	var log lab.Log
	_, _, p := labBMC(t, ipmibmc.Options{User: labUser, Password: labPass, Log: &log})
	d := ipmi.Driver{}
	if err := d.PowerOn(ctxFor(t, 10*time.Second), p); err != nil {
		t.Fatal(err)
	}
	query(t, d, p)
	var got []string
	for _, e := range log.Entries() {
		got = append(got, e.Command)
	}
	if !slices.Equal(got, []string{"power on", "status"}) {
		t.Fatalf("log %v", got)
	}
}

// wantKind checks the classification and that the password never shows.
func wantKind(t *testing.T, err error, kind power.Kind, pass string) {
	t.Helper()
	var pe *power.Error
	if !errors.As(err, &pe) || pe.Kind != kind {
		t.Fatalf("got %v, want a %s error", err, kind)
	}
	if pass != "" && strings.Contains(err.Error(), pass) {
		t.Fatalf("the error shows the password: %v", err)
	}
	t.Logf("%s: %v", kind, err)
}

func TestDriverUnreachable(t *testing.T) {
	// A port nobody listens on: the kernel answers ICMP port unreachable.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	t0 := time.Now()
	_, err = ipmi.Driver{}.Query(ctxFor(t, 10*time.Second), map[string]string{ipmi.ParamAddress: addr, ipmi.ParamUser: labUser, ipmi.ParamPass: labPass})
	wantKind(t, err, power.Unreachable, labPass)
	if time.Since(t0) > 3*time.Second {
		t.Fatalf("a refused port took %v", time.Since(t0))
	}
}

func TestDriverWrongPassword(t *testing.T) {
	for _, drv := range []string{ipmi.DriverLAN20, ipmi.DriverLAN15} {
		m, b, p := labBMC(t, ipmibmc.Options{User: labUser, Password: labPass})
		p[ipmi.ParamDriver] = drv
		wrong := map[string]string{}
		for k, v := range p {
			wrong[k] = v
		}
		wrong[ipmi.ParamPass] = "Not-" + labPass
		wantKind(t, ipmi.Driver{}.PowerOn(ctxFor(t, 10*time.Second), wrong), power.AuthRefused, wrong[ipmi.ParamPass])
		wrong[ipmi.ParamUser] = "nobody"
		_, err := ipmi.Driver{}.Query(ctxFor(t, 10*time.Second), wrong)
		wantKind(t, err, power.AuthRefused, wrong[ipmi.ParamPass])

		// The BMC's password was changed behind Anvil's back.
		b.SetFaults(lab.Faults{WrongPassword: true})
		_, err = ipmi.Driver{}.Query(ctxFor(t, 10*time.Second), p)
		wantKind(t, err, power.AuthRefused, labPass)
		if m.IsOn() || len(m.Changes()) != 0 {
			t.Fatalf("%s: a refused login changed the machine: %v", drv, m.Changes())
		}
	}
}

func TestDriverHang(t *testing.T) {
	_, _, p := labBMC(t, ipmibmc.Options{User: labUser, Password: labPass, Faults: lab.Faults{Hang: true}})
	// With a short deadline: Timeout, on time.
	t0 := time.Now()
	_, err := ipmi.Driver{}.Query(ctxFor(t, 700*time.Millisecond), p)
	wantKind(t, err, power.Timeout, labPass)
	if d := time.Since(t0); d > 1500*time.Millisecond {
		t.Fatalf("the deadline was not honoured: %v", d)
	}
	// With time to spare, the retries run out first: no answer at all.
	_, err = ipmi.Driver{Timeout: 100 * time.Millisecond, Retries: 2}.Query(ctxFor(t, 10*time.Second), p)
	wantKind(t, err, power.Unreachable, labPass)
}

func TestDriverDelay(t *testing.T) {
	m, _, p := labBMC(t, ipmibmc.Options{User: labUser, Password: labPass, Faults: lab.Faults{Delay: 150 * time.Millisecond}})
	if err := (ipmi.Driver{}).PowerOn(ctxFor(t, 10*time.Second), p); err != nil || !m.IsOn() {
		t.Fatalf("slow BMC: %v", err)
	}
	// A deadline shorter than the login: Timeout.
	_, err := ipmi.Driver{}.Query(ctxFor(t, 400*time.Millisecond), p)
	wantKind(t, err, power.Timeout, labPass)
}

// With 30% of requests lost, go-ipmi's retries still get every operation
// through.
func TestDriverPacketLoss(t *testing.T) {
	m, _, p := labBMC(t, ipmibmc.Options{User: labUser, Password: labPass, Faults: lab.Faults{LossRate: 0.3}})
	d := ipmi.Driver{Timeout: 100 * time.Millisecond, Retries: 8}
	for i := range 5 {
		if err := d.PowerOn(ctxFor(t, 20*time.Second), p); err != nil {
			t.Fatalf("power on %d: %v", i, err)
		}
		if err := d.SetBootDevice(ctxFor(t, 20*time.Second), p, power.BootDevice{Device: "network"}); err != nil {
			t.Fatalf("boot device %d: %v", i, err)
		}
		if st := query(t, d, p); st != machine.PowerOn {
			t.Fatalf("query %d: %s", i, st)
		}
	}
	if got := m.Changes(); !slices.Equal(got, []string{"on"}) {
		t.Fatalf("changes %v", got)
	}
}

// go-ipmi's BMC has four session slots and answers each packet from a
// goroutine of its own. Twenty logins at once must not break it: each
// query succeeds or is refused as a BMC error (no free slot, or its
// half-open session evicted for another), and the BMC serves afterwards.
func TestDriverConcurrentQueries(t *testing.T) {
	_, _, p := labBMC(t, ipmibmc.Options{User: labUser, Password: labPass})
	d := ipmi.Driver{Retries: 2}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = d.Query(ctxFor(t, 15*time.Second), p)
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		wantKind(t, err, power.BMCError, labPass)
	}
	if ok == 0 {
		t.Fatal("no query succeeded")
	}
	t.Logf("%d of %d concurrent queries succeeded", ok, len(errs))
	if st := query(t, ipmi.Driver{}, p); st != machine.PowerOff {
		t.Fatalf("after the storm: %s", st)
	}
}

// A BMC that takes over a second to answer is not asked to open a session
// twice: with the default settings every operation holds one session on
// the BMC, never two.
func TestDriverSlowLoginOneSession(t *testing.T) {
	meter := lab.NewSessionMeter()
	m, _, p := labBMC(t, ipmibmc.Options{User: labUser, Password: labPass, Sessions: meter, Faults: lab.Faults{Delay: 1200 * time.Millisecond}})
	if err := (ipmi.Driver{}).PowerOn(ctxFor(t, 60*time.Second), p); err != nil || !m.IsOn() {
		t.Fatalf("power on through a slow BMC: %v", err)
	}
	if s := meter.Stats(); s.MaxOneBMC != 1 {
		t.Fatalf("the BMC held %d sessions at once for one operation (%+v)", s.MaxOneBMC, s)
	}
}
