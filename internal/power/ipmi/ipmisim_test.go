package ipmi_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/power/ipmi"
)

// OpenIPMI's ipmi_sim (Debian package openipmi) is an independent BMC
// implementation. Without a VM attached it has no chassis to control and
// answers chassis control and boot options with CCh; its chassis_control
// option hands both to a program instead ("prog get power", "prog set
// power 1", "prog set boot pxe"), which here is a shell script keeping the
// state in files. It speaks cipher suites 0-3 only (no 17) and IPMI 1.5.
// It does not answer Get Channel Cipher Suites, which is why the driver
// names its suites rather than asking.
const chassisScript = `#!/bin/sh
# chassis control for ipmi_sim: $1 is the state directory.
d=$1; op=$2; shift 2
echo "$op $*" >> "$d/calls"
case $op in
get) for k in "$@"; do
       v=$(cat "$d/$k" 2>/dev/null)
       [ -n "$v" ] || { [ "$k" = boot ] && v=none || v=0; }
       printf '%s:%s\n' "$k" "$v"
     done ;;
set) while [ $# -ge 2 ]; do printf '%s' "$2" > "$d/$1"; shift 2; done ;;
esac
`

const simPass = "Sim-secret1"

type ipmiSim struct {
	params map[string]string
	hw     string // the chassis script's state: files power, boot, calls
}

func (s ipmiSim) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.hw, name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func startIPMISim(t *testing.T) ipmiSim {
	t.Helper()
	bin, err := exec.LookPath("ipmi_sim")
	if err != nil {
		t.Skip("ipmi_sim is not installed (Debian package openipmi; scripts/test.sh installs it)")
	}
	dir := t.TempDir()
	hw, state := filepath.Join(dir, "hw"), filepath.Join(dir, "state")
	for _, d := range []string{hw, state} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "chassis.sh")
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	lanConf := fmt.Sprintf(`name "anvil-test"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 %d
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
  chassis_control "%s %s"
  user 2 true "admin" "%s" admin 10 none md2 md5 straight
`, port, script, hw, simPass)
	emu := "mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\nmc_enable 0x20\n"
	for name, body := range map[string]string{"lan.conf": lanConf, "sim.emu": emu, "chassis.sh": chassisScript} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "-c", filepath.Join(dir, "lan.conf"), "-f", filepath.Join(dir, "sim.emu"), "-n", "-s", state)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
		cmd.Wait()
		if t.Failed() {
			t.Logf("ipmi_sim output:\n%s", out.String())
		}
	})

	s := ipmiSim{hw: hw, params: map[string]string{
		ipmi.ParamAddress: fmt.Sprintf("127.0.0.1:%d", port), ipmi.ParamUser: "admin", ipmi.ParamPass: simPass,
	}}
	quick := ipmi.Driver{Timeout: 200 * time.Millisecond, Retries: -1}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := quick.Query(ctxFor(t, time.Second), s.params)
		if err == nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("ipmi_sim does not answer: %v\n%s", err, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestIPMISim(t *testing.T) {
	s := startIPMISim(t)
	d := ipmi.Driver{}
	ctx := ctxFor(t, 20*time.Second)
	p := s.params

	if st := query(t, d, p); st != machine.PowerOff {
		t.Fatalf("query: %s", st)
	}
	if err := d.PowerOn(ctx, p); err != nil || s.read(t, "power") != "1" || query(t, d, p) != machine.PowerOn {
		t.Fatalf("power on: %v (power=%q)", err, s.read(t, "power"))
	}
	// Power on of a machine that is on must not cut its power.
	if err := d.PowerOn(ctx, p); err != nil || strings.Contains(s.read(t, "calls"), "set power 0") {
		t.Fatalf("power on again: %v\n%s", err, s.read(t, "calls"))
	}
	if err := d.PowerOff(ctx, p, false); err != nil || query(t, d, p) != machine.PowerOff {
		t.Fatalf("power off: %v", err)
	}
	// ipmi_sim cycles by powering off and, a second later, on.
	if err := d.PowerOn(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := d.PowerCycle(ctx, p); err != nil {
		t.Fatalf("cycle: %v", err)
	}
	for query(t, d, p) != machine.PowerOn {
		if ctx.Err() != nil {
			t.Fatal("ipmi_sim did not power on after the cycle")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if calls := s.read(t, "calls"); strings.Count(calls, "set power 0") != 2 {
		t.Fatalf("cycle did not pass through off:\n%s", calls)
	}
	if err := d.PowerOff(ctx, p, true); err != nil || !strings.Contains(s.read(t, "calls"), "set shutdown 1") {
		t.Fatalf("soft off: %v", err)
	}

	// ipmi_sim passes only the device on (pxe, default = disk).
	if err := d.SetBootDevice(ctx, p, power.BootDevice{Device: "network", EFI: true}); err != nil || s.read(t, "boot") != "pxe" {
		t.Fatalf("boot network: %v (boot=%q)", err, s.read(t, "boot"))
	}
	if err := d.SetBootDevice(ctx, p, power.BootDevice{Device: "disk", Persistent: true}); err != nil || s.read(t, "boot") != "default" {
		t.Fatalf("boot disk: %v (boot=%q)", err, s.read(t, "boot"))
	}
}

func TestIPMISimLoginVariants(t *testing.T) {
	s := startIPMISim(t)
	with := func(kv ...string) map[string]string {
		p := map[string]string{}
		for k, v := range s.params {
			p[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	quick := ipmi.Driver{Timeout: 300 * time.Millisecond, Retries: 1}
	for _, c := range []map[string]string{
		with(ipmi.ParamDriver, ipmi.DriverLAN15),
		with(ipmi.ParamCipherSuite, "3"),
		with(ipmi.ParamPrivilege, "OPERATOR"),
	} {
		if st, err := quick.Query(ctxFor(t, 10*time.Second), c); err != nil || st != machine.PowerOff {
			t.Fatalf("%v: %s %v", c, st, err)
		}
	}
	_, err := quick.Query(ctxFor(t, 10*time.Second), with(ipmi.ParamPass, "wrong-"+simPass))
	wantKind(t, err, power.AuthRefused, simPass)
	_, err = quick.Query(ctxFor(t, 10*time.Second), with(ipmi.ParamUser, "nobody"))
	wantKind(t, err, power.AuthRefused, simPass)
	_, err = quick.Query(ctxFor(t, 10*time.Second), with(ipmi.ParamCipherSuite, "17"))
	wantKind(t, err, power.Unsupported, simPass)
	// IPMI 1.5 with a wrong password: ipmi_sim drops the Activate Session
	// it cannot authenticate instead of refusing it.
	_, err = quick.Query(ctxFor(t, 10*time.Second), with(ipmi.ParamDriver, ipmi.DriverLAN15, ipmi.ParamPass, "Wrong-pass"))
	wantKind(t, err, power.AuthRefused, simPass)
}
