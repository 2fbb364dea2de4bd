package lab

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const testUUID = "4c4c4544-0051-3210-8052-b2c04f4e3132"

var _ Machine = (*QEMUMachine)(nil)

// needQEMU skips when QEMU is not installed.
func needQEMU(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86 ipxe-qemu ovmf)")
	}
}

// newTestQEMU makes a machine in a short state directory (the QMP socket
// path must fit a unix socket) and closes it at the end of the test.
func newTestQEMU(t *testing.T, cfg QEMUConfig) *QEMUMachine {
	t.Helper()
	if cfg.StateDir == "" {
		dir, err := os.MkdirTemp("", "aq")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		cfg.StateDir = dir
	}
	if cfg.ID == "" {
		cfg.ID = "m1"
	}
	if cfg.UUID == "" {
		cfg.UUID = testUUID
	}
	if cfg.Memory == 0 {
		cfg.Memory = 256
	}
	m, err := NewQEMU(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pid := m.Pid()
		m.Close()
		if pid != 0 && processAlive(pid) {
			t.Errorf("QEMU pid %d still alive after Close", pid)
		}
	})
	return m
}

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func serialSize(m *QEMUMachine) int {
	b, _ := os.ReadFile(m.SerialLog())
	return len(b)
}

// firstSeen waits up to 30 s for a or b on the serial console past
// offset off and returns the one that came first.
func firstSeen(t *testing.T, m *QEMUMachine, off int, a, b string) string {
	t.Helper()
	var first string
	// OVMF under TCG takes 10-20 s to reach its boot manager on a quiet
	// machine; a loaded CI machine (parallel test packages, PostgreSQL)
	// has been seen to need more than 30.
	waitFor(90*time.Second, func() bool {
		out, _ := os.ReadFile(m.SerialLog())
		if off > len(out) {
			return false
		}
		s := string(out[off:])
		i, j := strings.Index(s, a), strings.Index(s, b)
		switch {
		case i >= 0 && (j < 0 || i < j):
			first = a
		case j >= 0:
			first = b
		}
		return first != ""
	})
	if first == "" {
		out, _ := os.ReadFile(m.SerialLog())
		t.Fatalf("neither %s nor %s on the serial console: %q", a, b, out[min(off, len(out)):])
	}
	return first
}

func serialCount(m *QEMUMachine, s string) int {
	b, _ := os.ReadFile(m.SerialLog())
	return strings.Count(string(b), s)
}

func qmpStatus(t *testing.T, m *QEMUMachine) string {
	t.Helper()
	raw, err := m.QMP("query-status", nil)
	if err != nil {
		t.Fatalf("query-status: %v", err)
	}
	var st struct{ Status string }
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return st.Status
}

// bootArg returns the value following -boot, "" if none.
func bootArg(args []string) string {
	if i := slices.Index(args, "-boot"); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func hasArg(args []string, prefix string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, prefix) })
}

func TestQEMUConfigErrors(t *testing.T) {
	for name, cfg := range map[string]QEMUConfig{
		"no id":        {UUID: testUUID},
		"bad uuid":     {ID: "a", UUID: "nope"},
		"bad mac":      {ID: "a", UUID: testUUID, MACs: []string{"52:54:00:zz:00:01"}},
		"netdevs":      {ID: "a", UUID: testUUID, NetDevs: []string{"tap0"}},
		"nic model":    {ID: "a", UUID: testUUID, NICModel: "ne2k_pci"},
		"firmware":     {ID: "a", UUID: testUUID, Firmware: "coreboot"},
		"long sockdir": {ID: "a", UUID: testUUID, StateDir: "/tmp/" + strings.Repeat("x", 120)},
	} {
		if _, err := NewQEMU(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestQEMUArgs(t *testing.T) {
	dir := t.TempDir()
	m, err := NewQEMU(QEMUConfig{
		ID: "m,1", UUID: testUUID, StateDir: dir,
		MACs:    []string{"52:54:00:00:00:01", "52:54:00:00:00:02"},
		NetDevs: []string{"tap-m1"},
		Disk:    "/var/lib/lab/m1.qcow2", NICModel: "e1000", Memory: 256,
		MoreDisks: []string{"/var/lib/lab/m1-b.img"},
		NVMeDisks: []string{"/var/lib/lab/m1-n.img"},
		SATADisks: []string{"/var/lib/lab/m1-s.img"},
		Extra:     []string{"-device", "isa-ipmi-kcs,bmc=bmc0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	a := m.Args()
	if a[0] != "qemu-system-x86_64" {
		t.Errorf("program %q", a[0])
	}
	for _, want := range [][]string{
		{"-accel", "tcg"},
		{"-name", "m,,1"},
		{"-m", "256"},
		{"-uuid", testUUID},
		{"-smbios", "type=1,uuid=" + testUUID},
		{"-serial", "chardev:serial0"},
		{"-chardev", "file,id=serial0,append=on,path=" + filepath.Join(dir, "serial.log")},
		{"-qmp", "unix:" + filepath.Join(dir, "qmp.sock") + ",server=on,wait=off"},
		{"-pidfile", filepath.Join(dir, "qemu.pid")},
		{"-drive", "if=none,id=drive0,format=qcow2,file=/var/lib/lab/m1.qcow2"},
		{"-device", "virtio-blk-pci,drive=drive0,id=disk0"},
		{"-drive", "if=none,id=drive1,format=raw,file=/var/lib/lab/m1-b.img"},
		{"-device", "virtio-blk-pci,drive=drive1,id=disk1"},
		{"-drive", "if=none,id=nvme0,format=raw,file=/var/lib/lab/m1-n.img"},
		{"-device", "nvme,drive=nvme0,serial=anvil-nvme-0"},
		{"-device", "ahci,id=ahci0"},
		{"-drive", "if=none,id=sata0,format=raw,file=/var/lib/lab/m1-s.img"},
		{"-device", "ide-hd,drive=sata0,bus=ahci0.0,serial=anvil-sata-0"},
		{"-netdev", "tap,id=n0,ifname=tap-m1,script=no,downscript=no"},
		{"-device", "e1000,netdev=n0,mac=52:54:00:00:00:01,id=nic0"},
		{"-netdev", "user,id=n1,restrict=on"},
		{"-device", "e1000,netdev=n1,mac=52:54:00:00:00:02,id=nic1"},
		{"-device", "isa-ipmi-kcs,bmc=bmc0"},
		{"-device", "virtio-rng-pci"},
	} {
		i := slices.Index(a, want[0])
		found := false
		for ; i >= 0 && i+1 < len(a); i++ {
			if a[i] == want[0] && a[i+1] == want[1] {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no %s %s in %q", want[0], want[1], a)
		}
	}
	if a[len(a)-1] != "isa-ipmi-kcs,bmc=bmc0" {
		t.Errorf("extra args not last: %q", a)
	}
	if hasArg(a, "-bios") || hasArg(a, "if=pflash") {
		t.Errorf("EFI firmware on a BIOS machine: %q", a)
	}

	// BIOS boot order, from the boot device.
	for _, c := range []struct {
		device     string
		persistent bool
		want       string
	}{
		{"disk", true, "order=c"},
		{"disk", false, "order=c"},
		{"network", false, "once=n,order=c"},
		// Set persistently, the network stays first after a boot once
		// of either device, as the firmware's own order.
		{"network", true, "order=n"},
		{"network", false, "once=n,order=n"},
		{"disk", false, "once=c,order=n"},
		{"disk", true, "order=c"},
	} {
		if err := m.SetBootDevice(c.device, c.persistent, false); err != nil {
			t.Fatal(err)
		}
		if got := bootArg(m.Args()); got != c.want {
			t.Errorf("%s persistent=%v: -boot %q, want %q", c.device, c.persistent, got, c.want)
		}
	}
	if err := m.SetBootDevice("cdrom", true, false); err == nil {
		t.Error("cdrom accepted")
	}

	// Defaults, network namespace.
	n, err := NewQEMU(QEMUConfig{ID: "m2", UUID: testUUID, StateDir: dir, Netns: "lab0", MACs: []string{"52:54:00:00:00:03"}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	a = n.Args()
	if !slices.Equal(a[:5], []string{"ip", "netns", "exec", "lab0", "qemu-system-x86_64"}) {
		t.Errorf("netns prefix: %q", a[:5])
	}
	if i := slices.Index(a, "-m"); a[i+1] != "512" {
		t.Errorf("default memory %s", a[i+1])
	}
	if !slices.Contains(a, "virtio-net-pci,netdev=n0,mac=52:54:00:00:00:03,id=nic0") {
		t.Errorf("default NIC model: %q", a)
	}
	if dev, p, efi := n.BootDevice(); dev != "disk" || !p || efi {
		t.Errorf("new machine boots %s persistent=%v efi=%v", dev, p, efi)
	}
	if bootArg(a) != "order=c" {
		t.Errorf("new machine: -boot %q", bootArg(a))
	}
}

func TestQEMUArgsEFI(t *testing.T) {
	dir := t.TempDir()
	m, err := NewQEMU(QEMUConfig{
		ID: "e1", UUID: testUUID, StateDir: dir, Firmware: "efi",
		MACs: []string{"52:54:00:00:00:01", "52:54:00:00:00:02"}, Disk: filepath.Join(dir, "d.img"),
		OVMFCode: "/fw/CODE.fd", OVMFVars: "/fw/VARS.fd",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	a := m.Args()
	if bootArg(a) != "" {
		t.Errorf("-boot %q on EFI (OVMF ignores it)", bootArg(a))
	}
	for _, want := range []string{
		"if=pflash,format=raw,unit=0,readonly=on,file=/fw/CODE.fd",
		"if=pflash,format=raw,unit=1,file=" + filepath.Join(dir, "OVMF_VARS.fd"),
		"if=none,id=drive0,format=raw,file=" + filepath.Join(dir, "d.img"),
		"virtio-blk-pci,drive=drive0,id=disk0,bootindex=0", // disk first
		"virtio-net-pci,netdev=n0,mac=52:54:00:00:00:01,id=nic0,bootindex=1",
		"virtio-net-pci,netdev=n1,mac=52:54:00:00:00:02,id=nic1",
	} {
		if !slices.Contains(a, want) {
			t.Errorf("no %s in %q", want, a)
		}
	}
	for _, persistent := range []bool{true, false} {
		m.SetBootDevice("network", persistent, true)
		if a := m.Args(); !slices.Contains(a, "virtio-blk-pci,drive=drive0,id=disk0,bootindex=2") {
			t.Errorf("network persistent=%v: disk not after the NICs: %q", persistent, a)
		}
	}

	// Debian's packaged OVMF by default.
	d, err := NewQEMU(QEMUConfig{ID: "e2", UUID: testUUID, StateDir: dir, Firmware: "efi"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a = d.Args()
	if !hasArg(a, "if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd") &&
		!slices.Contains(a, "/usr/share/ovmf/OVMF.fd") {
		t.Errorf("no OVMF: %q", a)
	}
}

// TestQEMUPower runs a real QEMU: SeaBIOS, no disk, one user-mode NIC,
// booting iPXE from the network with nothing to boot.
func TestQEMUPower(t *testing.T) {
	needQEMU(t)
	t.Parallel()
	m := newTestQEMU(t, QEMUConfig{MACs: []string{"52:54:00:12:34:56"}, SoftOffWait: time.Second})
	if err := m.SetBootDevice("network", true, false); err != nil {
		t.Fatal(err)
	}
	if m.IsOn() {
		t.Fatal("on before PowerOn")
	}
	// Concurrent PowerOns start one QEMU.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() { errs <- m.PowerOn() })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	pid := m.Pid()
	if !m.IsOn() || pid == 0 {
		t.Fatal("off after PowerOn")
	}
	if b, err := os.ReadFile(filepath.Join(m.StateDir(), "qemu.pid")); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Errorf("pidfile %q (%v), pid %d", b, err, pid)
	}
	if st := qmpStatus(t, m); st != "running" {
		t.Errorf("status %q", st)
	}
	if !waitFor(20*time.Second, func() bool { return serialCount(m, "SeaBIOS") >= 1 }) {
		b, _ := os.ReadFile(m.SerialLog())
		t.Fatalf("no SeaBIOS on the serial console: %q", b)
	}
	if first := firstSeen(t, m, 0, biosDisk, biosNet); first != biosNet {
		t.Errorf("network boot: %s first", first)
	}

	// PowerOn again: no restart.
	if err := m.PowerOn(); err != nil || m.Pid() != pid {
		t.Fatalf("second PowerOn: %v, pid %d -> %d", err, pid, m.Pid())
	}

	// PowerCycle: a reset of the same process; the firmware runs again.
	if err := m.PowerCycle(); err != nil {
		t.Fatal(err)
	}
	if m.Pid() != pid {
		t.Errorf("PowerCycle restarted QEMU: pid %d -> %d", pid, m.Pid())
	}
	if !waitFor(20*time.Second, func() bool { return serialCount(m, "SeaBIOS") >= 2 }) {
		t.Error("firmware did not run again after PowerCycle")
	}

	// Soft off: accepted, the guest (no OS) ignores it, nothing is killed.
	start := time.Now()
	if err := m.PowerOff(true); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("soft PowerOff took %v", d)
	} else {
		t.Logf("soft PowerOff returned after %v", d)
	}
	if m.Pid() != pid {
		t.Errorf("soft PowerOff: pid %d -> %d", pid, m.Pid())
	}

	// Hard off.
	start = time.Now()
	if err := m.PowerOff(false); err != nil {
		t.Fatal(err)
	}
	if m.IsOn() || m.Pid() != 0 {
		t.Fatal("on after hard PowerOff")
	}
	if processAlive(pid) {
		t.Errorf("pid %d alive after PowerOff", pid)
	}
	t.Logf("hard PowerOff took %v", time.Since(start))
	if err := m.PowerOff(false); err != nil {
		t.Errorf("PowerOff of a machine that is off: %v", err)
	}

	// Power lost behind Anvil's back: SIGKILL.
	if err := m.PowerOn(); err != nil {
		t.Fatal(err)
	}
	if m.Pid() == pid || !m.IsOn() {
		t.Fatalf("PowerOn after off: pid %d (was %d)", m.Pid(), pid)
	}
	pid = m.Pid()
	m.Kill()
	if m.IsOn() || processAlive(pid) {
		t.Fatal("on after Kill")
	}

	// QEMU ending by itself (guest poweroff, crash) also reads as off;
	// PowerCycle of a machine that is off starts it.
	if err := m.PowerCycle(); err != nil {
		t.Fatal(err)
	}
	pid = m.Pid()
	if pid == 0 {
		t.Fatal("PowerCycle did not start a machine that was off")
	}
	if _, err := m.QMP("quit", nil); err != nil {
		t.Fatal(err)
	}
	if !waitFor(5*time.Second, func() bool { return !m.IsOn() }) {
		t.Fatal("on after QEMU quit by itself")
	}
	if processAlive(pid) {
		t.Error("QEMU not reaped")
	}

	// Close kills a running machine and takes the socket away.
	if err := m.PowerOn(); err != nil {
		t.Fatal(err)
	}
	pid = m.Pid()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if processAlive(pid) {
		t.Error("QEMU alive after Close")
	}
	if _, err := os.Stat(m.QMPSocket()); !os.IsNotExist(err) {
		t.Errorf("QMP socket left: %v", err)
	}
	if err := m.PowerOn(); err == nil {
		t.Error("PowerOn after Close")
	}
}

// SeaBIOS's lines when it boots a disk or an option ROM (iPXE); with no
// bootable disk it goes on to the next.
const biosDisk, biosNet = "Booting from Hard Disk", "Booting from ROM"

// TestQEMUBootOnce: a boot once from the network restarts a running QEMU
// on PowerCycle, is used up by that boot, and a reset then goes to the
// disk order without a restart.
func TestQEMUBootOnce(t *testing.T) {
	needQEMU(t)
	t.Parallel()
	m := newTestQEMU(t, QEMUConfig{MACs: []string{"52:54:00:12:34:57"}})
	if err := m.PowerOn(); err != nil {
		t.Fatal(err)
	}
	pid := m.Pid()
	if first := firstSeen(t, m, 0, biosDisk, biosNet); first != biosDisk {
		t.Errorf("disk: %s first", first)
	}
	if err := m.SetBootDevice("network", false, false); err != nil {
		t.Fatal(err)
	}
	mark := serialSize(m)
	if err := m.PowerCycle(); err != nil {
		t.Fatal(err)
	}
	if m.Pid() == pid || m.Pid() == 0 {
		t.Fatalf("boot once did not restart QEMU: pid %d -> %d", pid, m.Pid())
	}
	if !processAlive(m.Pid()) || processAlive(pid) {
		t.Error("old QEMU alive or new one dead")
	}
	if dev, p, _ := m.BootDevice(); dev != "disk" || !p {
		t.Errorf("boot once not used up: %s persistent=%v", dev, p)
	}
	if first := firstSeen(t, m, mark, biosDisk, biosNet); first != biosNet {
		t.Errorf("boot once from the network: %s first", first)
	}
	pid, mark = m.Pid(), serialSize(m)
	if err := m.PowerCycle(); err != nil {
		t.Fatal(err)
	}
	if m.Pid() != pid {
		t.Errorf("disk PowerCycle restarted QEMU")
	}
	if first := firstSeen(t, m, mark, biosDisk, biosNet); first != biosDisk {
		t.Errorf("reset after a boot once: %s first", first)
	}
	// Persistent network after a disk start: restart.
	m.SetBootDevice("network", true, false)
	mark = serialSize(m)
	if err := m.PowerCycle(); err != nil {
		t.Fatal(err)
	}
	if m.Pid() == pid {
		t.Error("changed boot device did not restart QEMU")
	}
	if first := firstSeen(t, m, mark, biosDisk, biosNet); first != biosNet {
		t.Errorf("persistent network: %s first", first)
	}
	if dev, p, _ := m.BootDevice(); dev != "network" || !p {
		t.Errorf("persistent device changed: %s %v", dev, p)
	}
}

// TestQEMUEFIBootOnce runs OVMF with a blank disk and a boot once from
// the network: the first boot goes to iPXE, the reset after to the disk.
func TestQEMUEFIBootOnce(t *testing.T) {
	needQEMU(t)
	if !fileExists("/usr/share/OVMF/OVMF_CODE_4M.fd") && !fileExists("/usr/share/ovmf/OVMF.fd") {
		t.Skip("OVMF is not installed (apt-get install ovmf)")
	}
	t.Parallel()
	dir, err := os.MkdirTemp("", "aq")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	disk := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(disk, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(disk, 8<<20); err != nil {
		t.Fatal(err)
	}
	m := newTestQEMU(t, QEMUConfig{StateDir: dir, Firmware: "efi", Disk: disk, MACs: []string{"52:54:00:12:34:58"}})
	m.SetBootDevice("network", false, true)
	if err := m.PowerOn(); err != nil {
		t.Fatal(err)
	}
	pid := m.Pid()
	raw, err := m.QMP("qom-get", map[string]any{"path": "/machine/peripheral/disk0", "property": "bootindex"})
	if err != nil || string(raw) != "0" {
		t.Errorf("disk bootindex after a boot once: %s (%v)", raw, err)
	}
	if dev, p, efi := m.BootDevice(); dev != "disk" || !p || !efi {
		t.Errorf("boot once not used up: %s persistent=%v efi=%v", dev, p, efi)
	}
	// OVMF says `BdsDxe: failed to load Boot0001 "UEFI Misc Device"` when
	// it tries the blank disk; iPXE prints its banner.
	const diskTry, netTry = `"UEFI Misc Device"`, "iPXE"
	if first := firstSeen(t, m, 0, diskTry, netTry); first != netTry {
		t.Errorf("first boot tried %s first, want the network", first)
	}
	// Let iPXE finish its banner (which names iPXE again) before marking
	// where the next boot's output starts; otherwise the tail of this
	// boot's banner reads as the next boot trying the network.
	waitFor(90*time.Second, func() bool {
		out, _ := os.ReadFile(m.SerialLog())
		return strings.Contains(string(out), "Features:")
	})
	mark := serialSize(m)
	if err := m.PowerCycle(); err != nil {
		t.Fatal(err)
	}
	if m.Pid() != pid {
		t.Error("PowerCycle restarted QEMU instead of a reset")
	}
	if first := firstSeen(t, m, mark, diskTry, netTry); first != diskTry {
		t.Errorf("after the reset OVMF tried %s first, want the disk", first)
	}
	if !fileExists(filepath.Join(dir, "OVMF_VARS.fd")) && fileExists("/usr/share/OVMF/OVMF_VARS_4M.fd") {
		t.Error("no EFI variable store in the state directory")
	}
}

// TestQEMUStartFailure: QEMU refusing its command line is an error that
// carries QEMU's message, and the machine stays off.
func TestQEMUStartFailure(t *testing.T) {
	needQEMU(t)
	m := newTestQEMU(t, QEMUConfig{Extra: []string{"-no-such-option"}})
	err := m.PowerOn()
	if err == nil || !strings.Contains(err.Error(), "no-such-option") {
		t.Errorf("PowerOn: %v", err)
	}
	if m.IsOn() {
		t.Error("on after a failed start")
	}
}

// TestQEMUNetnsTap runs QEMU in a network namespace with its NIC on a
// tap there, as the lab wires machines; iPXE's DHCP shows on the tap.
func TestQEMUNetnsTap(t *testing.T) {
	needQEMU(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace and a tap")
	}
	ns := "anvilq" + strconv.Itoa(os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Skipf("cannot make a network namespace: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	if out, err := exec.Command("ip", "-n", ns, "tuntap", "add", "dev", "tapq0", "mode", "tap").CombinedOutput(); err != nil {
		t.Fatalf("tap: %v %s", err, out)
	}
	if out, err := exec.Command("ip", "-n", ns, "link", "set", "tapq0", "up").CombinedOutput(); err != nil {
		t.Fatalf("tap up: %v %s", err, out)
	}
	m := newTestQEMU(t, QEMUConfig{MACs: []string{"52:54:00:12:34:5a"}, NetDevs: []string{"tapq0"}, Netns: ns})
	m.SetBootDevice("network", true, false)
	if err := m.PowerOn(); err != nil {
		t.Fatal(err)
	}
	// ip netns exec execs QEMU: the pid is QEMU's own.
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(m.Pid()) + "/cmdline")
	if !strings.HasPrefix(string(cmdline), "qemu-system-x86_64\x00") {
		t.Errorf("pid %d runs %q", m.Pid(), cmdline)
	}
	if !waitFor(20*time.Second, func() bool {
		out, _ := exec.Command("ip", "netns", "exec", ns, "cat", "/sys/class/net/tapq0/statistics/rx_packets").Output()
		n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		return n > 0
	}) {
		t.Error("no packets from the guest on the tap")
	}
	if err := m.PowerOff(false); err != nil || m.IsOn() {
		t.Errorf("PowerOff: %v, on %v", err, m.IsOn())
	}
}
