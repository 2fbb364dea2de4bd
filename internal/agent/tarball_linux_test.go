package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/testutil/diskimage"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (owners, device nodes, loop devices, mounts)")
	}
}

func TestExtractTar(t *testing.T) {
	needRoot(t)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, e := range []struct {
		h    tar.Header
		data string
	}{
		{tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}, ""},
		{tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o750, Gid: 5}, ""},
		{tar.Header{Name: "etc/passwd", Typeflag: tar.TypeReg, Mode: 0o644}, "root:x:0:0::/root:/bin/sh\n"},
		{tar.Header{Name: "usr/bin/su", Typeflag: tar.TypeReg, Mode: 0o4755, Uid: 0, Gid: 0}, "su"},
		{tar.Header{Name: "usr/bin/ping", Typeflag: tar.TypeReg, Mode: 0o755, PAXRecords: map[string]string{"SCHILY.xattr.user.anvil": "yes"}}, "ping"},
		{tar.Header{Name: "home/u/f", Typeflag: tar.TypeReg, Mode: 0o600, Uid: 1000, Gid: 1001}, "f"},
		{tar.Header{Name: "home/u/g", Typeflag: tar.TypeLink, Linkname: "home/u/f"}, ""},
		{tar.Header{Name: "bin", Typeflag: tar.TypeSymlink, Linkname: "usr/bin"}, ""},
		{tar.Header{Name: "dev/null", Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 3}, ""},
		{tar.Header{Name: "../../escape", Typeflag: tar.TypeReg, Mode: 0o644}, "x"},
		{tar.Header{Name: "out", Typeflag: tar.TypeSymlink, Linkname: "/"}, ""},
	} {
		h := e.h
		h.Size = int64(len(e.data))
		h.ModTime = mtime
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(e.data))
	}
	tw.Close()
	root := t.TempDir()
	n, err := extractTar(bytes.NewReader(buf.Bytes()), root)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len("root:x:0:0::/root:/bin/sh\n")+len("su")+len("ping")+1+1) {
		t.Errorf("extracted %d bytes", n)
	}
	check := func(name string, mode os.FileMode, uid, gid int) {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(root, name))
		if err != nil {
			t.Error(err)
			return
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode() != mode || int(st.Uid) != uid || int(st.Gid) != gid {
			t.Errorf("%s: %v %d:%d, want %v %d:%d", name, fi.Mode(), st.Uid, st.Gid, mode, uid, gid)
		}
		if fi.Mode()&os.ModeSymlink == 0 && !fi.ModTime().Equal(mtime) {
			t.Errorf("%s: mtime %v", name, fi.ModTime())
		}
	}
	check("etc", os.ModeDir|0o750, 0, 5)
	check("etc/passwd", 0o644, 0, 0)
	check("usr/bin/su", os.ModeSetuid|0o755, 0, 0)
	check("home/u/f", 0o600, 1000, 1001)
	check("bin", os.ModeSymlink|0o777, 0, 0)
	check("dev/null", os.ModeDevice|os.ModeCharDevice|0o666, 0, 0)
	check("escape", 0o644, 0, 0)
	a, _ := os.Stat(filepath.Join(root, "home/u/f"))
	b, _ := os.Stat(filepath.Join(root, "home/u/g"))
	if !os.SameFile(a, b) {
		t.Error("home/u/g is not a hard link to home/u/f")
	}
	if l, _ := os.Readlink(filepath.Join(root, "bin")); l != "usr/bin" {
		t.Errorf("bin -> %q", l)
	}
	if v := make([]byte, 16); true {
		if n, err := syscall.Getxattr(filepath.Join(root, "usr/bin/ping"), "user.anvil", v); err != nil || string(v[:n]) != "yes" {
			t.Logf("xattr user.anvil: %q %v (the filesystem may not take user xattrs)", v[:max(n, 0)], err)
		}
	}

	// An entry through a symbolic link fails rather than leave root.
	buf.Reset()
	tw = tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "out/etc/anvil-escaped", Typeflag: tar.TypeReg, Mode: 0o644})
	tw.Close()
	if _, err := extractTar(bytes.NewReader(buf.Bytes()), root); err == nil {
		t.Error("an entry through a symbolic link was extracted")
	}
	if _, err := os.Stat("/etc/anvil-escaped"); err == nil {
		os.Remove("/etc/anvil-escaped")
		t.Error("an entry escaped the root")
	}
}

func TestBootFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"vmlinuz-6.1.0-9-amd64", "vmlinuz-6.1.0-10-amd64", "initrd.img-6.1.0-10-amd64", "initrd.img-6.1.0-9-amd64"} {
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	k, i, err := bootFiles(dir)
	if err != nil || k != "vmlinuz-6.1.0-10-amd64" || i != "initrd.img-6.1.0-10-amd64" {
		t.Fatalf("bootFiles = %q %q %v", k, i, err)
	}
	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, "kernel-1"), []byte("x"), 0o644)
	os.Symlink("kernel-1", filepath.Join(dir, "vmlinuz"))
	os.WriteFile(filepath.Join(dir, "initrd.img"), []byte("x"), 0o644)
	k, i, err = bootFiles(dir)
	if err != nil || k != "kernel-1" || i != "initrd.img" {
		t.Fatalf("bootFiles = %q %q %v", k, i, err)
	}
	if _, _, err := bootFiles(t.TempDir()); err == nil {
		t.Fatal("no error without a kernel")
	}
}

// deployTarball runs the deploying phase for the tarball data (of the
// file type) onto a 256 MiB disk file, reaching partition 1 through a
// loop device, and returns the disk's path with what runPhase returns.
func deployTarball(t *testing.T, data []byte, fileType, sum string, task agentapi.Task) (disk string, reg *region, power *fakePower, out string) {
	t.Helper()
	needRoot(t)
	if _, err := exec.LookPath("losetup"); err != nil {
		t.Skip("losetup is not installed")
	}
	for _, tool := range RootfsTools {
		if _, err := findTool(tool); err != nil {
			t.Skip(err)
		}
	}
	if _, err := os.Stat(MBRCodeFile); err != nil {
		t.Skip(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "rootfs", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	blockDir, devDir := testDisks(t, 0, map[string]int64{"vda": 256 * MiB})
	disk = filepath.Join(devDir, "vda")
	var loops []string
	t.Cleanup(func() {
		for _, l := range loops {
			exec.Command("losetup", "-d", l).Run()
		}
	})
	old := rootfsPartition
	rootfsPartition = func(_, dev string) (string, error) {
		start, count := partition1(t, dev)
		out, err := exec.Command("losetup", "--show", "-f", "-o", fmt.Sprint(start), "--sizelimit", fmt.Sprint(count), dev).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("losetup: %v: %s", err, out)
		}
		l := strings.TrimSpace(string(out))
		loops = append(loops, l)
		return l, nil
	}
	defer func() { rootfsPartition = old }()
	task.Image = &agentapi.Image{URL: srv.URL + "/rootfs", SHA256: sum, Size: int64(len(data)), FileType: fileType}
	reg, power, out = runPhase(t, agentapi.PhaseDeploying, task, blockDir, devDir)
	for _, l := range loops {
		exec.Command("losetup", "-d", l).Run()
	}
	loops = nil
	return disk, reg, power, out
}

// partition1 reads partition 1's offset and size in bytes from the MBR.
func partition1(t *testing.T, dev string) (start, count int64) {
	t.Helper()
	mbr := make([]byte, 512)
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(mbr, 0); err != nil {
		t.Fatal(err)
	}
	return int64(binary.LittleEndian.Uint32(mbr[446+8:])) * 512, int64(binary.LittleEndian.Uint32(mbr[446+12:])) * 512
}

// TestDeployTarballBoots deploys a root filesystem tarball onto a disk
// file through the deploying phase, then boots the disk in QEMU and waits
// for the installed system to report the seed's settings.
func TestDeployTarballBoots(t *testing.T) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed")
	}
	tgz, _ := diskimage.BuildRootfs(t)
	data, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	host, ud := "tarball-host", "#cloud-config tarball"
	disk, reg, power, out := deployTarball(t, data, FileTypeTgz, sha(data),
		agentapi.Task{Hostname: host, InstanceID: "i-tarball", UserData: []byte(ud + "\n")})
	if s := lastSignal(reg); s.Status != agentapi.StatusInstalled {
		t.Fatalf("last signal %+v", s)
	}
	if got := power.get(); len(got) != 1 || got[0] != "reboot" {
		t.Fatalf("power actions %v", got)
	}
	if !strings.Contains(out, "boot loader extlinux") {
		t.Errorf("console does not show the boot loader:\n%s", out)
	}

	log := filepath.Join(t.TempDir(), "serial.log")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", "-accel", "tcg", "-m", "256", "-nographic",
		"-serial", "file:"+log, "-monitor", "none", "-drive", "file="+disk+",format=raw,if=virtio", "-device", "virtio-rng-pci", "-net", "none")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	want := diskimage.Line(host, ud)
	for {
		b, _ := os.ReadFile(log)
		if bytes.Contains(b, []byte(want)) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("no %q on the serial console:\n%s", want, b)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestDeployTarballFormats deploys the tarball as tbz and txz and checks
// what the filesystem holds.
func TestDeployTarballFormats(t *testing.T) {
	tgz, _ := diskimage.BuildRootfs(t)
	f, err := os.Open(tgz)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tarData, err := io.ReadAll(zr)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ fileType, tool string }{{FileTypeTbz, "bzip2"}, {FileTypeTxz, "xz"}} {
		t.Run(c.fileType, func(t *testing.T) {
			if _, err := exec.LookPath(c.tool); err != nil {
				t.Skipf("%s is not installed", c.tool)
			}
			cmd := exec.Command(c.tool, "-c", "-1")
			cmd.Stdin = bytes.NewReader(tarData)
			data, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			disk, reg, _, _ := deployTarball(t, data, c.fileType, sha(data), agentapi.Task{Hostname: "h", InstanceID: "i"})
			if s := lastSignal(reg); s.Status != agentapi.StatusInstalled {
				t.Fatalf("last signal %+v", s)
			}
			checkRootfs(t, disk)
		})
	}
}

// checkRootfs mounts partition 1 of disk and checks the test tarball's
// files kept their kinds, modes and owners.
func checkRootfs(t *testing.T, disk string) {
	t.Helper()
	start, count := partition1(t, disk)
	if start != MiB || start+count > 256*MiB-rootfsTail {
		t.Errorf("partition 1 at %d, %d bytes", start, count)
	}
	out, err := exec.Command("losetup", "--show", "-f", "-r", "-o", fmt.Sprint(start), "--sizelimit", fmt.Sprint(count), disk).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v: %s", err, out)
	}
	loop := strings.TrimSpace(string(out))
	defer exec.Command("losetup", "-d", loop).Run()
	mnt := t.TempDir()
	if err := syscall.Mount(loop, mnt, "ext4", syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("mount: %v", err)
	}
	defer syscall.Unmount(mnt, 0)
	for name, want := range map[string]struct {
		mode     os.FileMode
		uid, gid uint32
	}{
		"usr/bin/su":                {os.ModeSetuid | 0o755, 0, 0},
		"etc/shadow":                {0o640, 0, 42},
		"home/user":                 {os.ModeDir | 0o700, 1000, 1000},
		"tmp":                       {os.ModeDir | os.ModeSticky | 0o777, 0, 0},
		"sbin":                      {os.ModeSymlink | 0o777, 0, 0},
		"dev/console":               {os.ModeDevice | os.ModeCharDevice | 0o600, 0, 0},
		"boot/extlinux/ldlinux.sys": {0o444, 0, 0},
	} {
		fi, err := os.Lstat(filepath.Join(mnt, name))
		if err != nil {
			t.Error(err)
			continue
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode() != want.mode || st.Uid != want.uid || st.Gid != want.gid {
			t.Errorf("%s: %v %d:%d, want %v %d:%d", name, fi.Mode(), st.Uid, st.Gid, want.mode, want.uid, want.gid)
		}
	}
	a, _ := os.Stat(filepath.Join(mnt, "home/user/notes"))
	b, _ := os.Stat(filepath.Join(mnt, "home/user/notes.link"))
	if a == nil || b == nil || !os.SameFile(a, b) {
		t.Error("home/user/notes.link is not a hard link")
	}
	cfg, err := os.ReadFile(filepath.Join(mnt, "boot/extlinux/extlinux.conf"))
	if err != nil || !strings.Contains(string(cfg), "KERNEL /boot/vmlinuz-"+diskimage.RootfsKernelVersion) || !strings.Contains(string(cfg), "root=UUID=") {
		t.Errorf("extlinux.conf %q %v", cfg, err)
	}
	// The root the kernel mounts ro is remounted read-write by fstab: the
	// same filesystem UUID in both.
	uuid := regexp.MustCompile(`root=UUID=([0-9a-f-]+) ro `).FindSubmatch(cfg)
	fstab, err := os.ReadFile(filepath.Join(mnt, "etc/fstab"))
	if uuid == nil || err != nil || !strings.Contains(string(fstab), "\n"+rootFstabLine(string(uuid[1]))+"\n") {
		t.Errorf("etc/fstab %q %v does not mount the root of extlinux.conf %q read-write", fstab, err, cfg)
	}
}

// TestDeployTarballChecksumMismatch: a tarball that is not the one the
// task names fails the deployment, and the disk does not boot.
func TestDeployTarballChecksumMismatch(t *testing.T) {
	tgz, _ := diskimage.BuildRootfs(t)
	data, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	disk, reg, power, _ := deployTarball(t, data, FileTypeTgz, strings.Repeat("0", 64), agentapi.Task{Hostname: "h", InstanceID: "i"})
	if s := lastSignal(reg); s.Status != agentapi.StatusFailed || !strings.Contains(s.Error, "checksum mismatch") {
		t.Fatalf("last signal %+v", s)
	}
	if got := power.get(); len(got) != 1 || got[0] != "poweroff" {
		t.Errorf("power actions %v", got)
	}
	head := make([]byte, MiB)
	f, err := os.Open(disk)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.ReadAt(head, 0)
	if n := bytes.Count(head, []byte{0}); n != len(head) {
		t.Errorf("the disk's first MiB has %d non-zero bytes", len(head)-n)
	}
}
