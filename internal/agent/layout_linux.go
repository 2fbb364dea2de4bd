package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/anvilmetal/anvil/internal/storage"
)

// stageOf groups a plan's steps into the stages the closing line times.
var stageOf = map[string]string{
	"wipe": "partition", "table": "partition", "partition": "partition", "reread": "partition",
	"raid": "raid", "pv": "lvm", "vg": "lvm", "lv": "lvm", "bcache": "bcache", "write": "bcache",
	"mkfs": "mkfs", "mkdir": "mount", "mount": "mount",
}

// installLayout lays the configuration onto the disks, extracts the tar
// stream r onto it, writes fstab, the seed and mdadm.conf, and inside the
// installed system regenerates the initramfs and installs GRUB, as
// curtin does. Everything it mounted or assembled is unmounted and
// stopped when it returns; on failure the disks' first and last MiB are
// zeroed too, so a half-installed machine boots nothing. It returns the
// bytes of file content extracted.
func installLayout(ctx context.Context, r io.Reader, j layoutJob) (n int64, err error) {
	if j.Logf == nil {
		j.Logf = func(string, ...any) {}
	}
	if j.Stage == nil {
		j.Stage = func(string, time.Duration) {}
	}
	c := j.Config.WithUUIDs(func() string { u, _ := newUUID(); return u })
	plan, err := storage.MakePlan(c, j.Firmware, j.Disks, j.Target)
	if err != nil {
		return 0, fmt.Errorf("storage layout: %w", err)
	}
	for _, d := range []string{"/run/lvm", "/run/lock/lvm", "/etc/lvm", "/run/mdadm", j.Target} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, err
		}
	}
	td := &teardown{logf: j.Logf}
	defer func() {
		if terr := td.undo(ctx, c); terr != nil && err == nil {
			err = terr
		}
		if err != nil {
			for _, d := range j.Disks {
				if werr := wipeEnds(d); werr != nil {
					j.Logf("deploy wiping %s: %v", d, werr)
				}
			}
		}
	}()
	if err := runPlan(ctx, plan, td, j); err != nil {
		return 0, err
	}
	start := time.Now()
	n, err = extractTar(r, j.Target)
	if err == nil && j.Verify != nil {
		err = j.Verify()
	}
	j.Stage("unpack", time.Since(start))
	if err != nil {
		return n, err
	}
	j.Logf("deploy unpacked %d MiB into %s", n/MiB, j.Target)
	if err := configureTarget(ctx, c, plan, j); err != nil {
		return n, err
	}
	if err := bootLoader(ctx, c, td, j); err != nil {
		return n, err
	}
	unix.Sync()
	return n, nil
}

// runPlan runs the plan's steps in order; the first failure ends it with
// the command and its output.
func runPlan(ctx context.Context, plan storage.Plan, td *teardown, j layoutJob) error {
	took := map[string]time.Duration{}
	var order []string
	defer func() {
		for _, s := range order {
			j.Stage(s, took[s])
		}
	}()
	for _, s := range plan.Steps {
		start := time.Now()
		out, err := runStep(ctx, s)
		st := stageOf[s.Op]
		if _, seen := took[st]; !seen {
			order = append(order, st)
		}
		took[st] += time.Since(start)
		if err != nil {
			return fmt.Errorf("storage %s of %s: %s: %v: %s", s.Op, s.Device, stepLine(s), err, tailOutput(out))
		}
		if s.Op == "mount" {
			td.mounts = append(td.mounts, s.Argv[len(s.Argv)-1])
		}
		j.Logf("deploy storage %s %s: %s%s", s.Op, s.Device, stepLine(s), outputNote(out))
	}
	return nil
}

func stepLine(s storage.Step) string {
	return strings.TrimSuffix(strings.SplitN(storage.Plan{Steps: []storage.Step{s}}.String(), "\n# /etc/fstab", 2)[0], "\n")
}

func outputNote(out []byte) string {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return ""
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return " (" + strings.ReplaceAll(s, "\n", "; ") + ")"
}

// runStep runs one step: mkdir and mount by system call, writes to sysfs
// as writes, the rest as the programs they name.
func runStep(ctx context.Context, s storage.Step) ([]byte, error) {
	switch {
	case s.Op == "write":
		return nil, os.WriteFile(s.Path, []byte(s.Data), 0o200)
	case s.Op == "mkdir" && len(s.Argv) == 3:
		return nil, os.MkdirAll(s.Argv[2], 0o755)
	case s.Op == "mount" && len(s.Argv) == 5 && s.Argv[1] == "-t":
		return nil, unix.Mount(s.Argv[3], s.Argv[4], s.Argv[2], 0, "")
	}
	return runTool(ctx, s.Stdin, s.Argv...)
}

// runTool runs a program of the environment (found in toolDirs; LVM's
// commands through lvm) and returns its output, stdout and stderr.
func runTool(ctx context.Context, stdin string, argv ...string) ([]byte, error) {
	prog, err := findTool(argv[0])
	args := argv[1:]
	if err != nil && slices.Contains(lvmCommands, argv[0]) {
		if lvm, lerr := findTool("lvm"); lerr == nil {
			prog, args, err = lvm, argv, nil
		}
	}
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = []string{"PATH=" + strings.Join(toolDirs, ":"), "LANG=C", "LVM_SUPPRESS_FD_WARNINGS=1"}
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	return cmd.CombinedOutput()
}

// inTarget runs argv inside the installed system, with its own programs,
// its output shown line by line as it comes (update-initramfs takes a
// while) and returned.
func inTarget(ctx context.Context, target string, logf func(string, ...any), argv ...string) ([]byte, error) {
	path := argv[0]
	if !strings.HasPrefix(path, "/") {
		path = "/usr/sbin/" + argv[0]
		for _, d := range []string{"/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
			if _, err := os.Stat(filepath.Join(target, d, argv[0])); err == nil {
				path = d + "/" + argv[0]
				break
			}
		}
	}
	// An absolute path is not looked up here: it names the target's file.
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "HOME=/root", "DEBIAN_FRONTEND=noninteractive", "LVM_SUPPRESS_FD_WARNINGS=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: target}
	lw := &lineWriter{logf: logf, prefix: "deploy chroot " + argv[0] + "| "}
	cmd.Stdout, cmd.Stderr = lw, lw
	err := cmd.Run()
	lw.flush()
	return lw.all.Bytes(), err
}

// configureTarget writes what the installed system reads at boot: fstab
// by UUID, the NoCloud seed, mdadm.conf, GRUB's console settings.
func configureTarget(ctx context.Context, c storage.Config, plan storage.Plan, j layoutJob) error {
	if err := mergeFstab(j.Target, "the storage layout's filesystems by UUID", plan.Fstab); err != nil {
		return err
	}
	if err := writeSeedDir(j.Target, j.Seed); err != nil {
		return err
	}
	if len(c.RAIDs) > 0 {
		scan, err := runTool(ctx, "", "mdadm", "--detail", "--scan")
		if err != nil {
			return fmt.Errorf("mdadm --detail --scan: %v: %s", err, tailOutput(scan))
		}
		p := filepath.Join(j.Target, "etc/mdadm/mdadm.conf")
		old, _ := os.ReadFile(p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		os.Remove(p)
		if err := os.WriteFile(p, []byte(mdadmConf(string(old), string(scan))), 0o644); err != nil {
			return err
		}
	}
	p := filepath.Join(j.Target, "etc/default/grub.d/90-anvil.cfg")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	os.Remove(p)
	return os.WriteFile(p, []byte(grubDefaults), 0o644)
}

// bootLoader mounts the kernel's filesystems into the target and runs
// the image's update-initramfs, grub-install, update-grub and, on UEFI,
// efibootmgr there.
func bootLoader(ctx context.Context, c storage.Config, td *teardown, j layoutJob) error {
	t := j.Target
	mounts := []struct{ src, dir, fstype string }{
		{"proc", "proc", "proc"}, {"sysfs", "sys", "sysfs"}, {"/dev", "dev", ""}, {"/run", "run", ""},
	}
	if j.Firmware == storage.UEFI {
		mounts = append(mounts, struct{ src, dir, fstype string }{"efivarfs", "sys/firmware/efi/efivars", "efivarfs"})
	}
	for _, m := range mounts {
		dir := filepath.Join(t, m.dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		var flags uintptr
		if m.fstype == "" {
			flags = unix.MS_BIND
		}
		if err := unix.Mount(m.src, dir, m.fstype, flags, ""); err != nil {
			return fmt.Errorf("mounting %s at %s: %w", m.src, dir, err)
		}
		td.mounts = append(td.mounts, dir)
	}
	run := func(stage string, argv ...string) error {
		start := time.Now()
		out, err := inTarget(ctx, t, j.Logf, argv...)
		j.Stage(stage, time.Since(start))
		if err != nil {
			return fmt.Errorf("in the installed system: %s: %v: %s", strings.Join(argv, " "), err, tailOutput(out))
		}
		j.Logf("deploy chroot %s (%s)", strings.Join(argv, " "), time.Since(start).Round(time.Millisecond))
		return nil
	}
	if storage.NeedsInitramfs(c) {
		if err := run("initramfs", "update-initramfs", "-u", "-k", "all"); err != nil {
			return err
		}
	} else {
		j.Logf("deploy chroot: no RAID, LVM or bcache; the image's initramfs is kept")
	}
	if j.Firmware == storage.UEFI {
		if err := run("grub-install", "grub-install", "--target=x86_64-efi", "--efi-directory=/boot/efi", "--bootloader-id=debian", "--no-nvram", "--recheck"); err != nil {
			return err
		}
		// The removable path: firmware that lost or never kept the boot
		// entry still finds GRUB there.
		if err := run("grub-install", "grub-install", "--target=x86_64-efi", "--efi-directory=/boot/efi", "--removable", "--no-nvram"); err != nil {
			return err
		}
	} else {
		disks, err := bootDisks(c)
		if err != nil {
			return err
		}
		for _, d := range disks {
			if err := run("grub-install", "grub-install", "--target=i386-pc", "--recheck", j.Disks[d]); err != nil {
				return err
			}
		}
	}
	if err := run("update-grub", "update-grub"); err != nil {
		return err
	}
	if j.Firmware == storage.UEFI {
		start := time.Now()
		err := bootEntry(ctx, c, j)
		j.Stage("efibootmgr", time.Since(start))
		return err
	}
	return nil
}

var (
	bootEntryRE   = regexp.MustCompile(`(?m)^Boot([0-9A-Fa-f]{4})\*? (.*?)(\t|\s+HD\(|$)`)
	bootCurrentRE = regexp.MustCompile(`(?m)^BootCurrent: ([0-9A-Fa-f]{4})`)
	bootOrderRE   = regexp.MustCompile(`(?m)^BootOrder: ([0-9A-Fa-f,]+)`)
)

// bootEntryLabel names the firmware's entry for the installed system.
const bootEntryLabel = "debian"

// bootEntry replaces the firmware's entry for the installed system with
// one for GRUB on the ESP, and orders it after the entry the machine
// booted from (see bootOrder).
func bootEntry(ctx context.Context, c storage.Config, j layoutJob) error {
	disk, part, ok := espPartition(c)
	if !ok {
		return errors.New("storage: no EFI system partition for the boot entry")
	}
	efi := func(args ...string) (string, error) {
		out, err := inTarget(ctx, j.Target, j.Logf, append([]string{"efibootmgr"}, args...)...)
		if err != nil {
			return "", fmt.Errorf("in the installed system: efibootmgr %s: %v: %s", strings.Join(args, " "), err, tailOutput(out))
		}
		return string(out), nil
	}
	list, err := efi()
	if err != nil {
		return err
	}
	for _, m := range bootEntryRE.FindAllStringSubmatch(list, -1) {
		if strings.TrimSpace(m[2]) == bootEntryLabel {
			if _, err := efi("--bootnum", m[1], "--delete-bootnum"); err != nil {
				return err
			}
		}
	}
	list, err = efi("--create", "--disk", j.Disks[disk], "--part", fmt.Sprint(part), "--label", bootEntryLabel, "--loader", `\EFI\debian\grubx64.efi`)
	if err != nil {
		return err
	}
	var added, current string
	for _, m := range bootEntryRE.FindAllStringSubmatch(list, -1) {
		if strings.TrimSpace(m[2]) == bootEntryLabel {
			added = m[1]
		}
	}
	if m := bootCurrentRE.FindStringSubmatch(list); m != nil {
		current = m[1]
	}
	var order []string
	if m := bootOrderRE.FindStringSubmatch(list); m != nil {
		order = strings.Split(m[1], ",")
	}
	want := bootOrder(current, added, order)
	if _, err := efi("--bootorder", strings.Join(want, ",")); err != nil {
		return err
	}
	j.Logf("deploy boot entry Boot%s %s on %s partition %d, boot order %s", added, bootEntryLabel, j.Disks[disk], part, strings.Join(want, ","))
	return nil
}

// teardown undoes what an installation mounted and assembled, so the
// disks are quiet before the reboot.
type teardown struct {
	mounts []string
	logf   func(string, ...any)
}

func (td *teardown) undo(ctx context.Context, c storage.Config) error {
	var first error
	note := func(err error) {
		if err != nil {
			td.logf("deploy teardown: %v", err)
			if first == nil {
				first = err
			}
		}
	}
	unix.Sync()
	for i := len(td.mounts) - 1; i >= 0; i-- {
		if err := unix.Unmount(td.mounts[i], 0); err != nil {
			// Something still holds it: detach it, and say so.
			note(fmt.Errorf("unmounting %s: %w", td.mounts[i], err))
			_ = unix.Unmount(td.mounts[i], unix.MNT_DETACH)
		}
	}
	td.mounts = nil
	for _, vg := range c.VolumeGroups {
		if out, err := runTool(ctx, "", "vgchange", "--config", storage.LVMConfig, "-an", vg.Name); err != nil {
			note(fmt.Errorf("vgchange -an %s: %v: %s", vg.Name, err, tailOutput(out)))
		}
	}
	for i := len(c.Bcaches) - 1; i >= 0; i-- {
		_ = os.WriteFile(fmt.Sprintf("/sys/block/bcache%d/bcache/stop", i), []byte("1"), 0o200)
	}
	for i := len(c.RAIDs) - 1; i >= 0; i-- {
		if out, err := runTool(ctx, "", "mdadm", "--stop", "/dev/md/"+c.RAIDs[i].Name); err != nil && !bytes.Contains(out, []byte("No such file")) {
			note(fmt.Errorf("mdadm --stop %s: %v: %s", c.RAIDs[i].Name, err, tailOutput(out)))
		}
	}
	return first
}

// wipeEnds zeroes the first and last MiB of a disk: its partition tables
// (GPT keeps a copy at the end) and boot code.
func wipeEnds(dev string) error {
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	zero := make([]byte, MiB)
	if _, err := f.WriteAt(zero, 0); err != nil {
		return err
	}
	if size > 2*MiB {
		if _, err := f.WriteAt(zero, size-MiB); err != nil {
			return err
		}
	}
	return f.Sync()
}

// lineWriter logs what is written to it a line at a time and keeps it all.
type lineWriter struct {
	logf   func(string, ...any)
	prefix string
	all    bytes.Buffer
	line   []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.all.Write(p)
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.logf("%s%s", w.prefix, bytes.TrimRight(w.line[:i], "\r"))
		w.line = w.line[i+1:]
	}
}

func (w *lineWriter) flush() {
	if len(w.line) > 0 {
		w.logf("%s%s", w.prefix, w.line)
		w.line = nil
	}
}
