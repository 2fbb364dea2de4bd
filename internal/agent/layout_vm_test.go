package agent_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agent"
	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/debimage"
	"github.com/anvilmetal/anvil/internal/netns"
	"github.com/anvilmetal/anvil/internal/storage"
	ephemeraltest "github.com/anvilmetal/anvil/internal/testutil/ephemeral"
)

// The layout test runs this package's test binary as /init of a QEMU
// machine booted on the ephemeral environment (its kernel, its initrd
// with the tools and modules the installer uses): it lays a Debian image
// onto the machine's two disks with installLayout, powers off, and the
// host then boots those disks on their own and logs in over SSH.
const (
	layoutVMEnv  = "ANVIL_LAYOUT_VM" // uefi or bios: the guest's variant
	layoutKeyPub = "/anvil-layout/key.pub"
	guestIP      = "198.51.100.10"
	hostIP       = "198.51.100.1"
	guestMAC     = "52:54:00:51:64:0a"
	layoutDiskMB = 4096
)

// layoutCase is one variant: the configuration the installer lays out,
// what the installed system must show.
type layoutCase struct {
	name     string
	fw       storage.Firmware
	disks    int
	config   func() storage.Config
	hostname string
	want     map[string]*regexp.Regexp // SSH command → what its output must match
}

var layoutDisks = []storage.Disk{
	{ID: 1, Name: "sda", Serial: "anvil-layout-1", Size: layoutDiskMB * storage.MiB, BlockSize: 512},
	{ID: 2, Name: "sdb", Serial: "anvil-layout-2", Size: layoutDiskMB * storage.MiB, BlockSize: 512},
}

// raidLVMUEFI: ESP on the first disk, RAID 1 across both for /boot, LVM
// on RAID 1 for / and swap. The configuration names the disks sda and
// sdb by serial; the machine calls them vda and vdb.
func raidLVMUEFI() storage.Config {
	const M = storage.MiB
	rest := int64(layoutDiskMB-769-1) * M
	return storage.Config{
		Layout: "", BootDisk: "sda", Disks: layoutDisks,
		Tables: []storage.PartitionTable{
			{Disk: "sda", Type: storage.GPT, Partitions: []storage.Partition{
				{Number: 1, Offset: 1 * M, Size: 256 * M, Bootable: true, Type: storage.PartESP},
				{Number: 2, Offset: 257 * M, Size: 512 * M},
				{Number: 3, Offset: 769 * M, Size: rest},
			}},
			{Disk: "sdb", Type: storage.GPT, Partitions: []storage.Partition{
				{Number: 1, Offset: 257 * M, Size: 512 * M},
				{Number: 2, Offset: 769 * M, Size: rest},
			}},
		},
		RAIDs: []storage.RAID{
			{Name: "md0", Level: storage.RAID1, Devices: []string{"sda-part2", "sdb-part1"}},
			{Name: "md1", Level: storage.RAID1, Devices: []string{"sda-part3", "sdb-part2"}},
		},
		VolumeGroups: []storage.VolumeGroup{{Name: "vg0", Devices: []string{"md1"}, Volumes: []storage.LogicalVolume{
			{Name: "lvroot", Size: 1800 * M}, {Name: "lvswap", Size: 256 * M},
		}}},
		Filesystems: []storage.Filesystem{
			{Device: "sda-part1", Type: storage.FAT32, Label: "efi", MountPoint: "/boot/efi"},
			{Device: "md0", Type: storage.Ext4, Label: "boot", MountPoint: "/boot"},
			{Device: "vg0-lvroot", Type: storage.Ext4, Label: "root", MountPoint: "/"},
			{Device: "vg0-lvswap", Type: storage.Swap, MountPoint: "none"},
		},
	}
}

// flatBIOS is MAAS's flat layout for a BIOS machine on one disk.
func flatBIOS() storage.Config {
	c, err := storage.ApplyLayout(storage.LayoutFlat, storage.Machine{Disks: layoutDisks[:1], Firmware: storage.BIOS}, storage.LayoutParams{})
	if err != nil {
		panic(err)
	}
	return c
}

var layoutCases = map[string]layoutCase{
	"uefi": {name: "raid1-lvm-uefi", fw: storage.UEFI, disks: 2, config: raidLVMUEFI, hostname: "layout-uefi",
		want: map[string]*regexp.Regexp{
			"findmnt -n -o SOURCE,FSTYPE /":            regexp.MustCompile(`^/dev/mapper/vg0-lvroot ext4$`),
			"findmnt -n -o SOURCE,FSTYPE /boot":        regexp.MustCompile(`^/dev/md(0|/md0|127|126) ext4$`),
			"findmnt -n -o SOURCE,FSTYPE /boot/efi":    regexp.MustCompile(`^/dev/vda1 vfat$`),
			"cat /proc/mdstat":                         regexp.MustCompile(`(?s)md\S* : active raid1 .*vd[ab]\d.*vd[ab]\d.*md\S* : active raid1 .*vd[ab]\d.*vd[ab]\d`),
			"sudo lvs --noheadings -o lv_name,vg_name": regexp.MustCompile(`(?s)lvroot\s+vg0.*lvswap\s+vg0`),
			"swapon --show=NAME --noheadings":          regexp.MustCompile(`/dev/dm-\d`),
			"lsblk -n -o NAME,TYPE":                    regexp.MustCompile(`(?s)vda.*raid1.*vdb.*raid1`),
			"sudo efibootmgr":                          regexp.MustCompile(`(?m)^Boot[0-9A-F]{4}\* debian`),
			"ls /boot/efi/EFI/BOOT/":                   regexp.MustCompile(`(?i)bootx64\.efi`),
		}},
	"bios": {name: "flat-bios", fw: storage.BIOS, disks: 1, config: flatBIOS, hostname: "layout-bios",
		want: map[string]*regexp.Regexp{
			"findmnt -n -o SOURCE,FSTYPE /": regexp.MustCompile(`^/dev/vda2 ext4$`),
			"lsblk -n -o NAME,TYPE":         regexp.MustCompile(`vda2\s+part`),
		}},
}

// TestLayoutInstallsDebian is the proof of the installer: for each
// variant, a machine booted on the ephemeral environment lays the Debian
// image onto its disks with installLayout (UEFI: ESP, RAID 1 /boot, LVM
// on RAID 1 for / and swap, on two disks; BIOS: the flat layout), then
// the disks boot on their own (OVMF or SeaBIOS), the host logs in over
// SSH from a network namespace with the key the NoCloud seed delivered,
// checks the mounts, arrays and volumes, reboots the machine from inside
// and logs in again.
func TestLayoutInstallsDebian(t *testing.T) {
	if os.Getenv(layoutVMEnv) != "" {
		t.Skip("in the VM")
	}
	if testing.Short() {
		t.Skip("builds and boots Debian in QEMU")
	}
	if os.Getenv("ANVIL_REAL_OS") == "" {
		t.Skip("about 20 minutes a variant under TCG: set ANVIL_REAL_OS=1 to run it")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces, the Debian build")
	}
	for _, tool := range []string{"qemu-system-x86_64", "cpio", "ldd", "ssh", "ssh-keygen", "ip", "sgdisk", "mdadm", "lvm", "mkfs.vfat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	if _, err := os.Stat(ovmfCode); err != nil {
		t.Skipf("OVMF is not installed: %v", err)
	}
	tgz, built, err := debimage.BuildCached(context.Background(), os.TempDir(), debimage.Options{})
	if err != nil {
		t.Skipf("the Debian image: %v", err)
	}
	t.Logf("Debian image %s (built in %s)", tgz, built.Round(time.Second))
	kernel, initrd := ephemeraltest.Build(t)
	for _, v := range []string{"uefi", "bios"} {
		t.Run(layoutCases[v].name, func(t *testing.T) { runLayoutCase(t, v, tgz, kernel, initrd) })
	}
}

const (
	ovmfCode = "/usr/share/OVMF/OVMF_CODE_4M.fd"
	ovmfVars = "/usr/share/OVMF/OVMF_VARS_4M.fd"
)

func runLayoutCase(t *testing.T, variant, tgz, kernel, initrd string) {
	lc := layoutCases[variant]
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "anvil-layout-test", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	guestInitrd := layoutInitrd(t, dir, initrd, key+".pub")
	image := paddedCopy(t, tgz, filepath.Join(dir, "rootfs.tgz"))
	var disks []string
	for i := range lc.disks {
		p := filepath.Join(dir, fmt.Sprintf("disk%d.raw", i+1))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, layoutDiskMB<<20); err != nil {
			t.Fatal(err)
		}
		disks = append(disks, p)
	}
	var fw []string
	if lc.fw == storage.UEFI {
		vars := filepath.Join(dir, "OVMF_VARS.fd")
		b, err := os.ReadFile(ovmfVars)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(vars, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fw = []string{"-drive", "if=pflash,format=raw,unit=0,readonly=on,file=" + ovmfCode, "-drive", "if=pflash,format=raw,unit=1,file=" + vars}
	}
	diskArgs := func() []string {
		var a []string
		for i, p := range disks {
			id := fmt.Sprintf("d%d", i)
			dev := "virtio-blk-pci,drive=" + id + ",serial=" + layoutDisks[i].Serial
			if lc.fw == storage.UEFI {
				dev += fmt.Sprintf(",bootindex=%d", i+1)
			}
			a = append(a, "-drive", "if=none,format=raw,id="+id+",file="+p, "-device", dev)
		}
		return a
	}
	// TCG: nested KVM is not dependable where tests run (here it cannot
	// start SeaBIOS or OVMF at all).
	base := []string{"-accel", "tcg,thread=multi", "-machine", "q35", "-m", "2048", "-smp", "2", "-nodefaults", "-display", "none", "-device", "virtio-rng-pci"}

	// The installation.
	console := filepath.Join(dir, "install.log")
	args := append(append(append([]string(nil), base...), fw...), diskArgs()...)
	args = append(args, "-no-reboot", "-serial", "file:"+console, "-nic", "none",
		"-drive", "if=none,format=raw,readonly=on,id=img,file="+image, "-device", "virtio-blk-pci,drive=img,serial=anvil-image",
		"-kernel", kernel, "-initrd", guestInitrd,
		"-append", "console=ttyS0 panic=-1 "+layoutVMEnv+"="+variant+" -- -test.run=^TestLayoutInVM$ -test.v -test.count=1")
	// Under TCG on a busy machine update-initramfs alone (MODULES=most,
	// thousands of forks) takes half an hour.
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(layoutVMMinutes())*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, "qemu-system-x86_64", args...).CombinedOutput()
	log, _ := os.ReadFile(console)
	if err != nil {
		t.Fatalf("QEMU (installation): %v %s\nconsole:\n%s", err, out, tail(log, 8000))
	}
	if !bytes.Contains(log, []byte("ANVIL-LAYOUT-OK")) {
		t.Fatalf("the installation did not finish:\n%s", tail(log, 12000))
	}
	t.Logf("installation VM ran %s; stages: %s", time.Since(start).Round(time.Second), stagesOf(log))

	// The installed system, on its disks alone, on a network of its own.
	ns := fmt.Sprintf("anvil-layout-%d", os.Getpid())
	if err := netns.Add(ns); err != nil {
		t.Fatal(err)
	}
	defer netns.Delete(ns)
	for _, s := range [][]string{{"tuntap", "add", "dev", "tap0", "mode", "tap"}, {"addr", "add", hostIP + "/24", "dev", "tap0"}, {"link", "set", "tap0", "up"}} {
		if err := netns.IP(ns, s...); err != nil {
			t.Fatal(err)
		}
	}
	serial := filepath.Join(dir, "installed.log")
	args = append(append(append([]string{"netns", "exec", ns, "qemu-system-x86_64"}, base...), fw...), diskArgs()...)
	args = append(args, "-serial", "file:"+serial,
		"-netdev", "tap,id=n0,ifname=tap0,script=no,downscript=no", "-device", "virtio-net-pci,netdev=n0,mac="+guestMAC)
	vm := exec.Command("ip", args...)
	var vmOut bytes.Buffer
	vm.Stdout, vm.Stderr = &vmOut, &vmOut
	bootStart := time.Now()
	if err := vm.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { vm.Process.Kill(); vm.Wait() }()
	ssh := func(cmd string) (string, error) {
		c := exec.Command("ip", "netns", "exec", ns, "ssh", "-i", key, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
			"-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "LogLevel=ERROR", "debian@"+guestIP, cmd)
		b, err := c.CombinedOutput()
		return strings.TrimSpace(string(b)), err
	}
	login := func(what string, not string) string {
		deadline := time.Now().Add(15 * time.Minute)
		for {
			id, err := ssh("cat /proc/sys/kernel/random/boot_id")
			if err == nil && id != not && len(id) == 36 {
				return id
			}
			if time.Now().After(deadline) || vm.ProcessState != nil {
				b, _ := os.ReadFile(serial)
				t.Fatalf("no SSH login %s: %v %s\nQEMU: %s\nconsole:\n%s", what, err, id, vmOut.String(), tail(b, 8000))
			}
			time.Sleep(2 * time.Second)
		}
	}
	boot1 := login("after the installation", "")
	t.Logf("first boot to SSH: %s", time.Since(bootStart).Round(time.Second))
	if got, _ := ssh("hostname"); got != lc.hostname {
		t.Errorf("hostname %q, want %q", got, lc.hostname)
	}
	// SSH answers before cloud-init's last stage writes the deferred file.
	ssh("cloud-init status --wait")
	if got, _ := ssh("cat /home/debian/from-user-data"); got != "written by user data" {
		t.Errorf("the user data's file holds %q", got)
	}
	for cmd, re := range lc.want {
		got, err := ssh(cmd)
		if err != nil || !re.MatchString(got) {
			t.Errorf("%s: %v\n%s\nwant %s", cmd, err, got, re)
		}
	}
	if t.Failed() {
		b, _ := os.ReadFile(serial)
		t.Logf("console:\n%s", tail(b, 6000))
		return
	}
	rebootAt := time.Now()
	ssh("sudo systemctl reboot")
	login("after the reboot", boot1)
	t.Logf("reboot to SSH: %s", time.Since(rebootAt).Round(time.Second))
	if got, _ := ssh("findmnt -n -o SOURCE /"); !lc.want["findmnt -n -o SOURCE,FSTYPE /"].MatchString(got + " ext4") {
		t.Errorf("after the reboot / is %q", got)
	}
}

var stageRE = regexp.MustCompile(`ANVIL-STAGES (.*)`)

func stagesOf(log []byte) string {
	if m := stageRE.FindSubmatch(log); m != nil {
		return string(bytes.TrimSpace(m[1]))
	}
	return "?"
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// layoutInitrd is the environment's initrd followed by a second archive
// that replaces /init with this test binary (and adds the libraries it
// needs) and carries the SSH key.
func layoutInitrd(t *testing.T, dir, initrd, pub string) string {
	root := filepath.Join(dir, "extra")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyTo(t, self, filepath.Join(root, "init"), 0o755)
	copyTo(t, pub, filepath.Join(root, layoutKeyPub), 0o644)
	if out, err := exec.Command("ldd", self).Output(); err == nil {
		for _, m := range regexp.MustCompile(`(/\S+) \(0x`).FindAllStringSubmatch(string(out), -1) {
			copyTo(t, m[1], filepath.Join(root, m[1]), 0o755)
		}
	}
	extra := filepath.Join(dir, "extra.cpio")
	cmd := exec.Command("sh", "-c", "find . | cpio -o -H newc --quiet > "+extra)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio: %v %s", err, out)
	}
	a, _ := os.ReadFile(initrd)
	// The kernel reads the next archive at a 4-byte boundary and skips
	// zeros before it.
	a = append(a, make([]byte, (512-len(a)%512)%512)...)
	b, _ := os.ReadFile(extra)
	out := filepath.Join(dir, "initrd.img")
	if err := os.WriteFile(out, append(a, b...), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func copyTo(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// paddedCopy copies the image to a whole number of sectors, so the
// guest's disk holds all of it.
func paddedCopy(t *testing.T, from, to string) string {
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(out, in)
	if err == nil {
		err = out.Truncate((n + 511) / 512 * 512)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// TestLayoutInVM is the guest's side of TestLayoutInstallsDebian: as
// /init it sets the machine up as the agent does and installs.
func TestLayoutInVM(t *testing.T) {
	variant := os.Getenv(layoutVMEnv)
	if variant == "" || os.Getpid() != 1 {
		t.Skip("runs as /init of the layout test's VM")
	}
	agent.SetupPID1(os.Stderr)
	say := func(f string, a ...any) { fmt.Fprintf(os.Stdout, f+"\n", a...) }
	defer agent.MachinePower{}.PowerOff()
	defer func() {
		if p := recover(); p != nil {
			say("ANVIL-LAYOUT-FAIL: panic: %v", p)
			t.Fatal(p)
		}
	}()
	agent.LoadModules(agent.ModulesList, agent.ModulesDir, say)
	if err := guestInstall(variant, say); err != nil {
		say("ANVIL-LAYOUT-FAIL: %v", err)
		t.Fatal(err)
	}
	say("ANVIL-LAYOUT-OK")
}

func guestInstall(variant string, say func(string, ...any)) error {
	lc := layoutCases[variant]
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if len(agent.LocalDisks("/")) >= lc.disks+1 || time.Now().After(deadline) {
			break
		}
	}
	// A new RAID 1 resyncs in the background; the test checks the
	// layout, not the sync, and the disks' files stay sparse.
	os.WriteFile("/proc/sys/dev/raid/speed_limit_max", []byte("1"), 0)
	os.WriteFile("/proc/sys/dev/raid/speed_limit_min", []byte("1"), 0)
	local := agent.LocalDisks("/")
	var image string
	for _, l := range local {
		if l.Serial == "anvil-image" {
			image = "/dev/" + l.Name
		}
	}
	if image == "" {
		return fmt.Errorf("no image disk among %s", agent.DescribeDisks(local))
	}
	c := lc.config()
	disks, err := agent.MatchDisks(c, local, "/dev")
	if err != nil {
		return err
	}
	fw := agent.BootFirmware()
	if fw != lc.fw {
		return fmt.Errorf("booted %s, the variant is %s", fw, lc.fw)
	}
	pub, err := os.ReadFile(layoutKeyPub)
	if err != nil {
		return err
	}
	task := agentapi.Task{Hostname: lc.hostname, InstanceID: "i-" + lc.name, SSHKeys: []string{string(pub)},
		UserData: []byte("#cloud-config\nwrite_files:\n  - path: /home/debian/from-user-data\n    content: written by user data\n    permissions: '0644'\n    defer: true\n")}
	seed := append(agent.SeedFilesFor(task, "", ""), agent.SeedFile{"network-config", []byte(fmt.Sprintf(
		"version: 2\nethernets:\n  lan:\n    match:\n      macaddress: %q\n    set-name: lan0\n    addresses: [%s/24]\n", guestMAC, guestIP))})
	f, err := os.Open(image)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	zr.Multistream(false) // the disk's zeros after the stream are padding
	var stages []string
	_, err = agent.InstallLayout(context.Background(), zr, agent.LayoutJob{
		Config: c, Firmware: fw, Disks: disks, Target: "/target", Seed: seed,
		Logf: func(f string, a ...any) { say(agent.Prefix+f, a...) },
		Stage: func(name string, d time.Duration) {
			stages = append(stages, fmt.Sprintf("%s=%dms", name, d.Milliseconds()))
		},
	})
	say("ANVIL-STAGES %s", strings.Join(stages, " "))
	if err != nil {
		return err
	}
	js, _ := json.Marshal(disks)
	say("disks %s", js)
	return nil
}

// The VM test's configurations make plans (checked here, quickly, so a
// mistake in them does not cost a VM boot).
func TestLayoutCasesPlan(t *testing.T) {
	for v, lc := range layoutCases {
		var c storage.Config
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("%s: %v", v, p)
				}
			}()
			c = lc.config()
		}()
		n := 0
		c = c.WithUUIDs(func() string { n++; return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) })
		if _, err := storage.MakePlan(c, lc.fw, map[string]string{"sda": "/dev/vda", "sdb": "/dev/vdb"}, "/target"); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
}

// layoutVMMinutes bounds the installation VM's run
// (ANVIL_LAYOUT_VM_MINUTES, default 60).
func layoutVMMinutes() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("ANVIL_LAYOUT_VM_MINUTES"), &n); err != nil || n <= 0 {
		return 60
	}
	return n
}
