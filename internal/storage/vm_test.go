package storage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/kmod"
)

// inVM marks the run of this package's test binary inside the VM.
const inVM = "ANVIL_STORAGE_IN_VM"

// vmTools are what the plans run, copied with their libraries.
var vmTools = []string{"losetup", "blkid", "wipefs", "sgdisk", "partx", "mkfs.ext4", "mkfs.vfat", "mkswap", "lsblk",
	"mount", "umount", "truncate", "mdadm", "lvm", "dmsetup", "make-bcache"}

// TestPlanOnLoopDevicesInVM runs TestPlanOnLoopDevices inside a QEMU
// machine on the distribution's kernel, which has device-mapper, md and
// vfat where the build machine's kernel may not: the same binary is the
// VM's test, its initramfs holds busybox, the tools and their libraries
// and the modules. The VM has no network and no disks; the loop devices'
// files live in its memory.
func TestPlanOnLoopDevicesInVM(t *testing.T) {
	if os.Getenv(inVM) != "" {
		t.Skip("already in the VM")
	}
	if testing.Short() {
		t.Skip("boots QEMU")
	}
	kver, err := kmod.NewestKernel("/boot")
	if err != nil {
		t.Skipf("no distribution kernel in /boot: %v", err)
	}
	needTools(t, "qemu-system-x86_64", "cpio", "busybox", "ldd")
	needTools(t, vmTools...)
	root := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, self, filepath.Join(root, "storage.test"))
	stageTools(t, root)
	mods := stageModules(t, root, filepath.Join("/lib/modules", kver))
	os.WriteFile(filepath.Join(root, "init"), []byte(vmInit(mods)), 0o755)
	initrd := filepath.Join(t.TempDir(), "initrd.img")
	cmd := exec.Command("sh", "-c", "find . | cpio -o -H newc --quiet > "+initrd)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio: %v %s", err, out)
	}
	console := filepath.Join(t.TempDir(), "console.log")
	args := []string{"-m", "3072", "-smp", "1", "-nodefaults", "-display", "none", "-no-reboot", "-nic", "none",
		"-kernel", "/boot/vmlinuz-" + kver, "-initrd", initrd, "-serial", "file:" + console,
		"-append", "console=ttyS0 panic=-1 quiet"}
	// TCG: nested KVM is not dependable where tests run, and TCG is
	// quick enough for a few mkfs runs.
	args = append(args, "-accel", "tcg")
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(vmMinutes())*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, "qemu-system-x86_64", args...).CombinedOutput()
	log, _ := os.ReadFile(console)
	if err != nil {
		t.Fatalf("qemu: %v %s\nconsole:\n%s", err, out, tail(log, 6000))
	}
	t.Logf("VM ran the plans in %s", time.Since(start).Round(time.Second))
	for _, want := range []string{"--- PASS: TestPlanOnLoopDevices/lvm-uefi", "--- PASS: TestPlanOnLoopDevices/bcache-uefi", "--- PASS: TestPlanOnLoopDevices/raid1-lvm-uefi", "--- PASS: TestPlanOnLoopDevices/flat-uefi-boot", "ANVIL-EXIT 0"} {
		if !bytes.Contains(log, []byte(want)) {
			t.Errorf("the VM's console lacks %q:\n%s", want, tail(log, 6000))
		}
	}
	if !t.Failed() {
		for _, l := range strings.Split(string(log), "\n") {
			if strings.Contains(l, "--- ") {
				t.Log("VM: " + strings.TrimSpace(l))
			}
		}
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// vmInit mounts what the tools need, loads the modules in order, runs
// the loop-device test and powers off.
func vmInit(mods []string) string {
	return `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t tmpfs -o size=2560m tmp /tmp; mkdir -p /run/lock /run/lvm /etc/lvm
for m in ` + strings.Join(mods, " ") + `; do insmod /modules/$m.ko; done
# A new RAID 1 resyncs in the background, which would fill the memory
# its files live in; the test checks the layout, not the sync.
echo 1 > /proc/sys/dev/raid/speed_limit_max
echo 1 > /proc/sys/dev/raid/speed_limit_min
` + inVM + `=1 /storage.test -test.run 'TestPlanOnLoopDevices$' -test.v -test.count=1 2>&1
echo "ANVIL-EXIT $?"
poweroff -f
`
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(to), 0o755)
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

var lddPath = regexp.MustCompile(`(/\S+) \(0x`)

// stageTools copies busybox, vmTools (LVM's commands as links to lvm)
// and the shared libraries ldd names.
func stageTools(t *testing.T, root string) {
	bb, _ := exec.LookPath("busybox")
	copyFile(t, bb, filepath.Join(root, "bin/busybox"))
	for _, name := range vmTools {
		p, _ := exec.LookPath(name)
		copyFile(t, p, filepath.Join(root, "usr/sbin", name))
		out, _ := exec.Command("ldd", p).Output()
		for _, m := range lddPath.FindAllStringSubmatch(string(out), -1) {
			copyFile(t, m[1], filepath.Join(root, m[1]))
		}
	}
	for _, c := range []string{"pvcreate", "vgcreate", "lvcreate", "vgremove", "vgchange", "lvs", "vgs", "pvs"} {
		os.Symlink("lvm", filepath.Join(root, "usr/sbin", c))
	}
	for _, d := range []string{"proc", "sys", "dev", "tmp", "run", "etc", "modules"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
}

// stageModules writes the modules the plans need, dependencies first,
// and returns their names in load order.
func stageModules(t *testing.T, root, dir string) []string {
	mods, err := kmod.Load(dir, []string{"loop", "crc32c_generic", "ext4", "vfat", "nls_ascii", "nls_cp437", "nls_utf8", "nls_iso8859_1", "dm_mod", "md_mod", "raid1", "bcache"})
	if err != nil {
		t.Skipf("kernel modules: %v", err)
	}
	var names []string
	for _, m := range mods {
		if err := os.WriteFile(filepath.Join(root, "modules", m.Name+".ko"), m.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, m.Name)
	}
	return names
}

// vmMinutes bounds the VM's run (ANVIL_STORAGE_VM_MINUTES, default 8).
func vmMinutes() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("ANVIL_STORAGE_VM_MINUTES"), &n); err != nil || n <= 0 {
		return 8
	}
	return n
}
