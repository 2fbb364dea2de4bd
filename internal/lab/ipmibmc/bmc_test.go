package ipmibmc

import (
	"context"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power/ipmi"
)

const (
	testUser = "admin"
	testPass = "s3cret-pass"
)

// start serves a fresh machine (off, booting from disk) on a free port.
func start(t *testing.T, opts Options) (*lab.SimMachine, *BMC, string) {
	t.Helper()
	m := lab.NewSim("m1", "6b1c5a8e-3f2d-4e1a-9b7c-0d2e4f6a8b1c", "52:54:00:00:00:01")
	b := New(m, opts)
	addr, err := b.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	_, port, _ := net.SplitHostPort(addr.String())
	return m, b, port
}

// ipmitool runs the real ipmitool against the BMC. The password goes
// through IPMI_PASSWORD (-E) so that it never shows in a command line or
// a test log.
func ipmitool(t *testing.T, port, pass string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("ipmitool"); err != nil {
		t.Skip("ipmitool is not installed (Debian package ipmitool; scripts/test.sh installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	full := append([]string{"-H", "127.0.0.1", "-p", port, "-U", testUser, "-E", "-R", "2", "-N", "1"}, args...)
	if !slices.Contains(args, "-I") {
		full = append([]string{"-I", "lanplus"}, full...)
	}
	cmd := exec.CommandContext(ctx, "ipmitool", full...)
	cmd.Env = append(os.Environ(), "IPMI_PASSWORD="+pass)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustIpmitool(t *testing.T, port string, args ...string) string {
	t.Helper()
	out, err := ipmitool(t, port, testPass, args...)
	if err != nil {
		t.Fatalf("ipmitool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func TestIpmitoolPower(t *testing.T) {
	for _, cipher := range [][]string{nil, {"-C", "17"}, {"-C", "3"}} {
		t.Run("cipher"+strings.Join(cipher, ""), func(t *testing.T) {
			m, _, port := start(t, Options{User: testUser, Password: testPass})
			cmd := func(args ...string) string { return mustIpmitool(t, port, append(cipher, args...)...) }

			if out := cmd("chassis", "power", "status"); !strings.Contains(out, "Chassis Power is off") {
				t.Fatalf("status: %q", out)
			}
			cmd("chassis", "power", "on")
			if !m.IsOn() {
				t.Fatal("power on left the machine off")
			}
			if out := cmd("chassis", "power", "status"); !strings.Contains(out, "Chassis Power is on") {
				t.Fatalf("status: %q", out)
			}
			cmd("chassis", "power", "cycle")
			cmd("chassis", "power", "off")
			if m.IsOn() {
				t.Fatal("power off left the machine on")
			}
			cmd("chassis", "power", "on")
			cmd("chassis", "power", "soft")
			if m.IsOn() {
				t.Fatal("soft off left the machine on")
			}
			if got, want := m.Changes(), []string{"on", "cycle", "off", "on", "off"}; !slices.Equal(got, want) {
				t.Fatalf("changes %v, want %v", got, want)
			}
		})
	}
}

// A cycle of a machine that is off is refused with D5h, as the spec
// recommends; the machine stays off.
func TestIpmitoolCycleOffRefused(t *testing.T) {
	m, _, port := start(t, Options{User: testUser, Password: testPass})
	out, err := ipmitool(t, port, testPass, "chassis", "power", "cycle")
	if err == nil {
		t.Fatalf("cycle of an off machine succeeded: %s", out)
	}
	t.Logf("ipmitool: %s", strings.TrimSpace(out))
	if m.IsOn() || len(m.Changes()) != 0 {
		t.Fatalf("machine changed: %v", m.Changes())
	}
}

func TestIpmitoolBootdev(t *testing.T) {
	m, _, port := start(t, Options{User: testUser, Password: testPass})
	mustIpmitool(t, port, "chassis", "bootdev", "pxe")
	if dev, persistent, efi := m.BootDevice(); dev != "network" || persistent || efi {
		t.Fatalf("after bootdev pxe: %s persistent=%v efi=%v", dev, persistent, efi)
	}
	out := mustIpmitool(t, port, "chassis", "bootparam", "get", "5")
	if !strings.Contains(out, "Force PXE") {
		t.Fatalf("bootparam get 5: %s", out)
	}
	mustIpmitool(t, port, "chassis", "bootdev", "disk", "options=persistent,efiboot")
	if dev, persistent, efi := m.BootDevice(); dev != "disk" || !persistent || !efi {
		t.Fatalf("after bootdev disk persistent efi: %s persistent=%v efi=%v", dev, persistent, efi)
	}
}

// IPMI 1.5 (ipmitool -I lan, MD5) works too.
func TestIpmitoolLan15(t *testing.T) {
	m, _, port := start(t, Options{User: testUser, Password: testPass})
	mustIpmitool(t, port, "-I", "lan", "chassis", "power", "on")
	if out := mustIpmitool(t, port, "-I", "lan", "chassis", "power", "status"); !strings.Contains(out, "Chassis Power is on") || !m.IsOn() {
		t.Fatalf("status: %q", out)
	}
}

func TestIpmitoolWrongPassword(t *testing.T) {
	m, b, port := start(t, Options{User: testUser, Password: testPass})
	out, err := ipmitool(t, port, "not-"+testPass, "chassis", "power", "on")
	if err == nil {
		t.Fatalf("a wrong password was accepted: %s", out)
	}
	t.Logf("ipmitool: %s", strings.TrimSpace(out))
	if m.IsOn() {
		t.Fatal("a refused login changed the machine")
	}

	// The WrongPassword fault refuses the configured one, until cleared.
	if err := b.SetFaults(lab.Faults{WrongPassword: true}); err != nil {
		t.Fatal(err)
	}
	if out, err := ipmitool(t, port, testPass, "chassis", "power", "status"); err == nil {
		t.Fatalf("the WrongPassword fault let the password in: %s", out)
	}
	if err := b.SetFaults(lab.Faults{}); err != nil {
		t.Fatal(err)
	}
	mustIpmitool(t, port, "chassis", "power", "status")
}

func TestLogRecordsChassisCommands(t *testing.T) {
	var log lab.Log
	_, _, port := start(t, Options{User: testUser, Password: testPass, Log: &log})
	before := time.Now()
	mustIpmitool(t, port, "chassis", "power", "on")
	mustIpmitool(t, port, "chassis", "power", "status")
	mustIpmitool(t, port, "chassis", "bootdev", "pxe")

	var commands []string
	for _, e := range log.Entries() {
		if e.Machine != "m1" || e.Start.Before(before) || e.End.Before(e.Start) {
			t.Fatalf("bad entry %+v", e)
		}
		commands = append(commands, e.Command)
	}
	for _, want := range []string{"power on", "status", "boot device"} {
		if !slices.Contains(commands, want) {
			t.Fatalf("log %v lacks %q", commands, want)
		}
	}
}

func TestHangAndDelay(t *testing.T) {
	_, b, port := start(t, Options{User: testUser, Password: testPass, Faults: lab.Faults{Delay: 50 * time.Millisecond}})
	t0 := time.Now()
	mustIpmitool(t, port, "chassis", "power", "status")
	// Get Channel Auth Caps, Open Session, RAKP 1 and 3, Set Privilege,
	// the command and Close Session: at least 7 delayed answers.
	if d := time.Since(t0); d < 7*50*time.Millisecond {
		t.Fatalf("answers were not delayed: %v", d)
	}
	b.SetFaults(lab.Faults{Hang: true})
	if out, err := ipmitool(t, port, testPass, "-R", "1", "-N", "1", "chassis", "power", "status"); err == nil {
		t.Fatalf("a hung BMC answered: %s", out)
	}
}

func TestAnonymousUser(t *testing.T) {
	m, _, port := start(t, Options{Password: testPass})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := exec.LookPath("ipmitool"); err != nil {
		t.Skip("ipmitool is not installed")
	}
	cmd := exec.CommandContext(ctx, "ipmitool", "-I", "lanplus", "-H", "127.0.0.1", "-p", port, "-U", "", "-E", "chassis", "power", "on")
	cmd.Env = append(os.Environ(), "IPMI_PASSWORD="+testPass)
	if out, err := cmd.CombinedOutput(); err != nil || !m.IsOn() {
		t.Fatalf("anonymous power on: %v\n%s", err, out)
	}
}

// TestSessionMeter: each ipmitool run opens one session and closes it, and
// the meter sees both ends from the BMC's side.
func TestSessionMeter(t *testing.T) {
	meter := lab.NewSessionMeter()
	_, _, port := start(t, Options{User: testUser, Password: testPass, Sessions: meter})
	mustIpmitool(t, port, "chassis", "power", "status")
	mustIpmitool(t, port, "chassis", "power", "on")
	s := meter.Stats()
	if s.Total != 2 || s.Open != 0 || s.MaxOneBMC != 1 || s.MaxAll != 1 {
		t.Fatalf("meter saw %+v, want 2 sessions one after the other, none left open", s)
	}
}

// The lab BMC answers Get System GUID with its machine's SMBIOS UUID, in
// IPMI's byte order, through Anvil's driver.
func TestSystemGUID(t *testing.T) {
	const uuid = "6f2c1f1e-0000-4000-8000-0000000000ab"
	b := New(lab.NewSim("guid", uuid, "52:54:00:00:ab:01"), Options{User: "admin", Password: "secret"})
	addr, err := b.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	g, err := ipmi.Driver{}.SystemGUID(t.Context(), map[string]string{"power_address": addr.String(), "power_user": "admin", "power_pass": "secret"})
	if err != nil {
		t.Fatal(err)
	}
	if got := machine.GUIDAsUUID(g); len(got) == 0 || got[0] != uuid {
		t.Fatalf("system guid %x reads %v, want %s first", g, got, uuid)
	}
}
