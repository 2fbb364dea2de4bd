package ipmisim

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/power/ipmi"
)

const (
	testUser = "admin"
	testPass = "Lab-secret1"
	testMAC  = "02:00:5e:10:00:21"
	testUUID = "6b1c5a8e-3f2d-4e1a-9b7c-0d2e4f6a8b21"
)

func needTools(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"ipmi_sim", "qemu-system-x86_64"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed", bin)
		}
	}
}

func freeUDPPort(t *testing.T) int {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port
}

func qemuConfig() lab.QEMUConfig {
	return lab.QEMUConfig{ID: "bmc-test", UUID: testUUID, MACs: []string{"52:54:00:00:21:01"}, Memory: 256}
}

func start(t *testing.T, cfg Config) *BMC {
	t.Helper()
	needTools(t)
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	cfg.User, cfg.Password, cfg.MAC = testUser, testPass, testMAC
	b, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		if t.Failed() {
			log, _ := os.ReadFile(b.path("ipmi_sim.log"))
			qlog, _ := os.ReadFile(b.Machine().StateDir() + "/qemu.log")
			t.Logf("ipmi_sim.log:\n%s\nqemu.log:\n%s\nserial tail:\n%s", log, qlog, tail(b.Serial()))
		}
	})
	return b
}

// ipmitool runs the real ipmitool over lanplus; the password goes through
// the environment (-E).
func ipmitool(t *testing.T, b *BMC, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ipmitool"); err != nil {
		t.Skip("ipmitool is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	full := []string{"-I", "lanplus", "-H", b.cfg.Addr, "-p", strconv.Itoa(b.cfg.Port), "-U", testUser, "-E", "-C", "3"}
	var argv []string
	if b.cfg.Netns != "" {
		argv = []string{"ip", "netns", "exec", b.cfg.Netns}
	}
	argv = append(append(append(argv, "ipmitool"), full...), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "IPMI_PASSWORD="+testPass)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ipmitool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func waitFor(t *testing.T, what string, d time.Duration, ok func() bool) time.Duration {
	t.Helper()
	t0 := time.Now()
	for !ok() {
		if time.Since(t0) > d {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(t0)
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// chardevConnected says whether the QEMU process has a TCP connection to
// ipmi_sim's in-band port.
func chardevConnected(b *BMC) bool {
	pid := b.Machine().Pid()
	if pid == 0 {
		return false
	}
	m := regexp.MustCompile(`port=(\d+),reconnect`).FindStringSubmatch(cmdline(pid))
	if m == nil {
		return false
	}
	port, _ := strconv.Atoi(m[1])
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		return false
	}
	want := fmt.Sprintf(":%04X", port)
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		// An established connection from QEMU: the remote end is the port.
		if len(f) > 3 && strings.HasSuffix(f[2], want) && f[3] == "01" {
			return true
		}
	}
	return false
}

func TestLAN(t *testing.T) {
	b := start(t, Config{Addr: "127.0.0.1", Port: freeUDPPort(t), QEMU: qemuConfig()})
	d := ipmi.Driver{}
	p := b.Params()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	query := func() machine.PowerState {
		t.Helper()
		st, err := d.Query(ctx, p)
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		return st
	}

	// The LAN parameters the BMC reports about itself.
	lan := ipmitool(t, b, "lan", "print", "1")
	if !regexp.MustCompile(`IP Address\s+: 127\.0\.0\.1`).MatchString(lan) || !strings.Contains(lan, testMAC) ||
		!regexp.MustCompile(`Subnet Mask\s+: 255\.255\.255\.0`).MatchString(lan) {
		t.Fatalf("lan print 1:\n%s", lan)
	}

	// Its system GUID is its machine's SMBIOS UUID, in IPMI's order.
	g, err := d.SystemGUID(ctx, p)
	if err != nil {
		t.Fatalf("system guid: %v", err)
	}
	if got := machine.GUIDAsUUID(g); len(got) == 0 || got[0] != testUUID {
		t.Fatalf("system guid %x reads %v, want %s first", g, got, testUUID)
	}

	if st := query(); st != machine.PowerOff || b.Running() {
		t.Fatalf("at start: %s (running %v)", st, b.Running())
	}
	if out := ipmitool(t, b, "chassis", "power", "status"); !strings.Contains(out, "is off") {
		t.Fatalf("ipmitool status: %s", out)
	}

	// On, through Anvil's driver: QEMU runs and dials the in-band port.
	t0 := time.Now()
	if err := d.PowerOn(ctx, p); err != nil {
		t.Fatalf("power on: %v", err)
	}
	t.Logf("power on: %s", time.Since(t0))
	if !b.Running() || query() != machine.PowerOn {
		t.Fatal("not on after power on")
	}
	if dev, took := firstBoot(t, b, 0); dev != "Hard Disk" {
		t.Fatalf("boot from disk: SeaBIOS boots from %q first (%s)", dev, took)
	}
	t.Logf("chardev connected %s after power on", waitFor(t, "in-band connection", 15*time.Second, func() bool { return chardevConnected(b) }))
	if c := cmdline(b.Machine().Pid()); !strings.Contains(c, "-boot order=c") || !strings.Contains(c, "isa-ipmi-kcs") {
		t.Fatalf("qemu command line: %s", c)
	}
	pid := b.Machine().Pid()
	// Power on of a machine that is on leaves it be.
	if err := d.PowerOn(ctx, p); err != nil || b.Machine().Pid() != pid {
		t.Fatalf("power on again: %v (pid %d, was %d)", err, b.Machine().Pid(), pid)
	}

	// Off, hard: the process is gone.
	t0 = time.Now()
	if err := d.PowerOff(ctx, p, false); err != nil {
		t.Fatalf("power off: %v", err)
	}
	t.Logf("power off: %s", time.Since(t0))
	if b.Running() || query() != machine.PowerOff {
		t.Fatal("still on after power off")
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Fatalf("qemu %d still exists", pid)
	}

	// PXE once, then on through ipmitool: QEMU starts with -boot once=n,
	// and SeaBIOS takes the NIC's option ROM.
	if err := d.SetBootDevice(ctx, p, power.BootDevice{Device: "network"}); err != nil {
		t.Fatalf("boot network: %v", err)
	}
	if out := ipmitool(t, b, "chassis", "bootparam", "get", "5"); !strings.Contains(out, "Force PXE") {
		t.Fatalf("bootparam get 5:\n%s", out)
	}
	before, _ := os.ReadFile(b.Serial())
	ipmitool(t, b, "chassis", "power", "on")
	pid = b.Machine().Pid()
	if c := cmdline(pid); !strings.Contains(c, "-boot once=n,order=c") {
		t.Fatalf("after boot pxe, qemu command line: %s", c)
	}
	// SeaBIOS goes to the NIC's option ROM (iPXE) first.
	dev, took := firstBoot(t, b, len(before))
	if dev != "ROM" {
		t.Fatalf("boot once from the network: SeaBIOS boots from %q first", dev)
	}
	t.Logf("SeaBIOS boots the NIC's iPXE %s after power on", took)
	// The boot once is used up.
	if out := ipmitool(t, b, "chassis", "bootparam", "get", "5"); strings.Contains(out, "Force PXE") {
		t.Fatalf("boot once still set:\n%s", out)
	}

	// Cycle: a new QEMU process, which boots the disk.
	t0 = time.Now()
	if err := d.PowerCycle(ctx, p); err != nil {
		t.Fatalf("cycle: %v", err)
	}
	t.Logf("cycle took %s", waitFor(t, "a new qemu after the cycle", 20*time.Second, func() bool {
		n := b.Machine().Pid()
		return n != 0 && n != pid
	}))
	_ = t0
	if c := cmdline(b.Machine().Pid()); !strings.Contains(c, "-boot order=c") {
		t.Fatalf("after the cycle, qemu command line: %s", c)
	}
	if query() != machine.PowerOn {
		t.Fatal("off after the cycle")
	}

	// Reset: QEMU resets in place.
	pid = b.Machine().Pid()
	ipmitool(t, b, "chassis", "power", "reset")
	if b.Machine().Pid() != pid || query() != machine.PowerOn {
		t.Fatalf("reset: pid %d, was %d", b.Machine().Pid(), pid)
	}

	// Power lost behind the BMC's back: it reports off.
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	if query() != machine.PowerOff {
		t.Fatal("on after the machine was killed")
	}

	// The disk, persistent.
	if err := d.SetBootDevice(ctx, p, power.BootDevice{Device: "disk", Persistent: true}); err != nil {
		t.Fatalf("boot disk: %v", err)
	}
	if dev, persistent, _ := b.Machine().BootDevice(); dev != "disk" || !persistent {
		t.Fatalf("boot device %s persistent %v", dev, persistent)
	}
}

// firstBoot waits for SeaBIOS's first "Booting from X..." in the serial
// log from offset off, and returns X ("Hard Disk", "ROM": a NIC's iPXE).
func firstBoot(t *testing.T, b *BMC, off int) (string, time.Duration) {
	t.Helper()
	re := regexp.MustCompile(`Booting from ([^.\r\n]+)\.\.\.`)
	var m []string
	took := waitFor(t, "SeaBIOS to boot", 60*time.Second, func() bool {
		s, _ := os.ReadFile(b.Serial())
		m = re.FindStringSubmatch(string(s[min(off, len(s)):]))
		return m != nil
	})
	return m[1], took
}
