package redfish_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/redfishbmc"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/power/redfish"
)

const (
	user = "admin"
	pass = "s3cret-Pa55"
)

// bmc starts a lab service over TLS fronting machines and returns the
// parameters that reach it (verification off: the lab's certificate is
// self-signed) and the command log.
func bmc(t *testing.T, opts redfishbmc.Options, machines ...*lab.SimMachine) (map[string]string, *redfishbmc.Service, *lab.Log) {
	t.Helper()
	log := &lab.Log{}
	opts.User, opts.Password, opts.Log = user, pass, log
	for _, m := range machines {
		opts.Systems = append(opts.Systems, m)
	}
	svc := redfishbmc.New(opts)
	url, err := svc.Start("127.0.0.1:0", true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return map[string]string{
		"power_address": url, "power_user": user, "power_pass": pass, "power_verify_tls": "false",
	}, svc, log
}

func with(p map[string]string, kv ...string) map[string]string {
	q := map[string]string{}
	for k, v := range p {
		q[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		q[kv[i]] = kv[i+1]
	}
	return q
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// resets lists the reset commands the service carried out.
func resets(log *lab.Log) []string {
	var out []string
	for _, e := range log.Entries() {
		if strings.HasPrefix(e.Command, "reset ") || strings.HasPrefix(e.Command, "boot ") {
			out = append(out, e.Machine+" "+e.Command)
		}
	}
	return out
}

func query(t *testing.T, p map[string]string) machine.PowerState {
	t.Helper()
	st, err := redfish.Driver{}.Query(ctx(t), p)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantKind(t *testing.T, err error, kind power.Kind, says ...string) {
	t.Helper()
	var pe *power.Error
	if !errors.As(err, &pe) || pe.Kind != kind {
		t.Fatalf("error %v: want kind %q", err, kind)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if strings.Contains(err.Error(), pass) {
		t.Errorf("error %q contains the password", err)
	}
}

func TestPowerSingleSystem(t *testing.T) {
	m := lab.NewSim("node1", "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "52:54:00:AA:00:01")
	p, _, log := bmc(t, redfishbmc.Options{}, m)
	d := redfish.Driver{}
	c := ctx(t)

	if st := query(t, p); st != machine.PowerOff {
		t.Fatalf("query: %s, want off", st)
	}
	must(t, d.PowerOn(c, p))
	must(t, d.PowerOn(c, p)) // already on: must not reset
	if st := query(t, p); st != machine.PowerOn {
		t.Fatalf("query: %s, want on", st)
	}
	must(t, d.PowerOff(c, p, true))
	must(t, d.PowerOff(c, p, true)) // already off: nothing sent
	must(t, d.PowerOn(c, p))
	must(t, d.PowerOff(c, p, false))
	must(t, d.PowerCycle(c, p)) // off: powers on
	must(t, d.PowerCycle(c, p)) // on: PowerCycle, which the lab offers
	if got, want := m.Changes(), []string{"on", "off", "on", "off", "on", "cycle"}; !slices.Equal(got, want) {
		t.Errorf("changes %v, want %v", got, want)
	}
	want := []string{"node1 reset On", "node1 reset GracefulShutdown", "node1 reset On", "node1 reset ForceOff", "node1 reset On", "node1 reset PowerCycle"}
	if got := resets(log); !slices.Equal(got, want) {
		t.Errorf("commands %v, want %v", got, want)
	}
}

func TestPowerCycleFallsBackToForceRestart(t *testing.T) {
	m := lab.NewSim("n", "u")
	p, _, log := bmc(t, redfishbmc.Options{ResetTypes: []string{"On", "ForceOff", "ForceRestart"}}, m)
	d := redfish.Driver{}
	must(t, d.PowerOn(ctx(t), p))
	must(t, d.PowerCycle(ctx(t), p))
	if got, want := resets(log), []string{"n reset On", "n reset ForceRestart"}; !slices.Equal(got, want) {
		t.Errorf("commands %v, want %v", got, want)
	}
	// No GracefulShutdown offered: a soft off is unsupported, not faked.
	err := d.PowerOff(ctx(t), p, true)
	wantKind(t, err, power.Unsupported, "GracefulShutdown")
	if !errors.Is(err, power.ErrUnsupported) {
		t.Error("errors.Is(err, ErrUnsupported) is false")
	}
}

func TestSetBootDevice(t *testing.T) {
	m := lab.NewSim("n", "u")
	p, _, log := bmc(t, redfishbmc.Options{}, m)
	d := redfish.Driver{}
	check := func(wantDev string, wantPersistent, wantEFI bool) {
		t.Helper()
		dev, persistent, efi := m.BootDevice()
		if dev != wantDev || persistent != wantPersistent || efi != wantEFI {
			t.Errorf("boot device %s persistent=%v efi=%v, want %s %v %v", dev, persistent, efi, wantDev, wantPersistent, wantEFI)
		}
	}
	must(t, d.SetBootDevice(ctx(t), p, power.BootDevice{Device: "network", EFI: true}))
	check("network", false, true)
	// auto without EFI asked for leaves the mode alone.
	must(t, d.SetBootDevice(ctx(t), p, power.BootDevice{Device: "disk", Persistent: true}))
	check("disk", true, true)
	must(t, d.SetBootDevice(ctx(t), with(p, "power_boot_type", "legacy"), power.BootDevice{Device: "network"}))
	check("network", false, false)
	must(t, d.SetBootDevice(ctx(t), with(p, "power_boot_type", "efi"), power.BootDevice{Device: "network", Persistent: true}))
	check("network", true, true)
	want := []string{"n boot Pxe Once UEFI", "n boot Hdd Continuous", "n boot Pxe Once Legacy", "n boot Pxe Continuous UEFI"}
	if got := resets(log); !slices.Equal(got, want) {
		t.Errorf("commands %v, want %v", got, want)
	}
	wantKind(t, d.SetBootDevice(ctx(t), p, power.BootDevice{Device: "cdrom"}), power.BadParams, "cdrom")
}

func TestMultiSystem(t *testing.T) {
	a, b, c := lab.NewSim("a", "ua"), lab.NewSim("b", "ub"), lab.NewSim("c", "uc")
	p, _, _ := bmc(t, redfishbmc.Options{}, a, b, c)
	d := redfish.Driver{}

	wantKind(t, d.PowerOn(ctx(t), p), power.BadParams, "node_id", "a, b, c")
	_, err := d.Query(ctx(t), with(p, "node_id", "z"))
	wantKind(t, err, power.BadParams, `"z"`, "a, b, c")

	must(t, d.PowerOn(ctx(t), with(p, "node_id", "b")))
	must(t, d.PowerOn(ctx(t), with(p, "node_id", "/redfish/v1/Systems/c")))
	if a.IsOn() || !b.IsOn() || !c.IsOn() {
		t.Errorf("on: a=%v b=%v c=%v, want only b and c", a.IsOn(), b.IsOn(), c.IsOn())
	}
	if st := query(t, with(p, "node_id", "a")); st != machine.PowerOff {
		t.Errorf("a: %s", st)
	}
	// One BMC key for all three, told apart by System.
	ba, _ := d.BMC(with(p, "node_id", "a"))
	bb, _ := d.BMC(with(p, "node_id", "b"))
	if ba.Key() != bb.Key() || ba.System == bb.System {
		t.Errorf("BMC a %+v, b %+v", ba, bb)
	}
}

// Carry drives the driver end to end: a restart of an off machine sets a
// one-time network boot and powers it on.
func TestCarryRestart(t *testing.T) {
	m := lab.NewSim("n", "u")
	p, _, log := bmc(t, redfishbmc.Options{}, m)
	st, err := power.Carry(ctx(t), redfish.Driver{}, p, machine.PowerRestart, []time.Duration{10 * time.Millisecond})
	if err != nil || st != machine.PowerOn {
		t.Fatalf("carry: %s, %v", st, err)
	}
	if got, want := resets(log), []string{"n boot Pxe Once", "n reset On"}; !slices.Equal(got, want) {
		t.Errorf("commands %v, want %v", got, want)
	}
}

func TestTLSVerification(t *testing.T) {
	p, _, _ := bmc(t, redfishbmc.Options{}, lab.NewSim("n", "u"))
	strict := with(p)
	delete(strict, "power_verify_tls") // the default verifies
	_, err := redfish.Driver{}.Query(ctx(t), strict)
	wantKind(t, err, power.BadParams, "certificate", "power_verify_tls=false")
	_, err = redfish.Driver{}.Query(ctx(t), with(p, "power_verify_tls", "true"))
	wantKind(t, err, power.BadParams, "certificate")
	query(t, p) // opted out
}

func TestWrongPassword(t *testing.T) {
	p, svc, _ := bmc(t, redfishbmc.Options{}, lab.NewSim("n", "u"))
	_, err := redfish.Driver{}.Query(ctx(t), with(p, "power_pass", "not-it"))
	wantKind(t, err, power.AuthRefused, "401")
	if strings.Contains(err.Error(), "not-it") {
		t.Errorf("error %q contains the password", err)
	}
	// Someone changed the password on the box.
	svc.SetFaults(lab.Faults{WrongPassword: true})
	wantKind(t, redfish.Driver{}.PowerOn(ctx(t), p), power.AuthRefused, "401")
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = redfish.Driver{}.Query(ctx(t), map[string]string{"power_address": addr, "power_user": user, "power_pass": pass})
	wantKind(t, err, power.Unreachable, "https://"+addr, "refused")
}

func TestHangTimesOut(t *testing.T) {
	p, _, _ := bmc(t, redfishbmc.Options{Faults: lab.Faults{Hang: true}}, lab.NewSim("n", "u"))
	c, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := redfish.Driver{}.PowerOn(c, p)
	wantKind(t, err, power.Timeout, "no answer")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(err, DeadlineExceeded) is false for %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %s to give up", el)
	}
}

func TestInventory(t *testing.T) {
	a := lab.NewSim("a", "ua")
	b := lab.NewSim("b", "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "52:54:00:AA:00:01", "52:54:00:aa:00:02")
	p, _, _ := bmc(t, redfishbmc.Options{}, a, b)
	uuid, macs, err := redfish.Inventory(ctx(t), with(p, "node_id", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if uuid != "3f2504e0-4f89-11d3-9a0c-0305e82c3301" {
		t.Errorf("uuid %q", uuid)
	}
	if want := []string{"52:54:00:aa:00:01", "52:54:00:aa:00:02"}; !slices.Equal(macs, want) {
		t.Errorf("macs %v, want %v", macs, want)
	}
	_, _, err = redfish.Inventory(ctx(t), p)
	wantKind(t, err, power.BadParams, "a, b")
}
