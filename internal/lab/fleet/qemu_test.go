package fleet_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/fleet"
)

// TestQEMUMachineDrivenByIpmitool: ipmitool powers a real QEMU machine on
// and off through its lab BMC.
func TestQEMUMachineDrivenByIpmitool(t *testing.T) {
	for _, bin := range []string{"qemu-system-x86_64", "ipmitool"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (scripts/test.sh installs it)", bin)
		}
	}
	f, err := fleet.Start(fleet.Config{QEMU: 1, QEMUTemplate: lab.QEMUConfig{Memory: 128}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := f.Machines[0]
	host, port, _ := strings.Cut(m.Params["power_address"], ":")
	ipmitool := func(args ...string) string {
		t.Helper()
		base := []string{"-I", "lanplus", "-H", host, "-p", port, "-U", m.Params["power_user"], "-P", m.Params["power_pass"], "-C", "17"}
		out, err := exec.Command("ipmitool", append(base, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ipmitool %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := ipmitool("chassis", "power", "status"); !strings.Contains(out, "off") {
		t.Fatalf("new QEMU machine reads %q", out)
	}
	ipmitool("chassis", "bootdev", "pxe")
	ipmitool("chassis", "power", "on")
	deadline := time.Now().Add(20 * time.Second)
	for !m.QEMU.IsOn() || m.QEMU.Pid() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("QEMU did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out := ipmitool("chassis", "power", "status"); !strings.Contains(out, "on") {
		t.Fatalf("running QEMU machine reads %q", out)
	}
	ipmitool("chassis", "power", "off")
	deadline = time.Now().Add(20 * time.Second)
	for m.QEMU.IsOn() {
		if time.Now().After(deadline) {
			t.Fatal("QEMU did not stop")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
