package storage

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

var (
	uuidRE    = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	fatIDRE   = regexp.MustCompile(`^[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}$`) // a FAT volume id as blkid shows it
	labelChar = regexp.MustCompile(`^[A-Za-z0-9_.-]*$`)
)

// labelMax is the longest label each mkfs takes.
var labelMax = map[FSType]int{Ext2: 16, Ext4: 16, XFS: 12, Btrfs: 255, FAT32: 11, VFAT: 11, Swap: 15}

// mkfs formats every filesystem on a device, with its UUID and label.
func (p *planner) mkfs() error {
	for _, f := range p.c.Filesystems {
		if f.Type.Special() {
			continue
		}
		dev := p.path[f.Device]
		fat := f.Type == FAT32 || f.Type == VFAT
		if (fat && !fatIDRE.MatchString(f.UUID)) || (!fat && !uuidRE.MatchString(f.UUID)) {
			return fmt.Errorf("plan: the %s filesystem on %s needs a UUID (%s) for fstab, it has %q", f.Type, f.Device, map[bool]string{true: "XXXX-XXXX for FAT", false: "8-4-4-4-12 hex"}[fat], f.UUID)
		}
		if len(f.Label) > labelMax[f.Type] || !labelChar.MatchString(f.Label) {
			return fmt.Errorf("plan: label %q of %s is not up to %d letters, digits and _ . -", f.Label, f.Device, labelMax[f.Type])
		}
		var argv []string
		switch f.Type {
		case Ext2, Ext4:
			argv = []string{"mkfs." + string(f.Type), "-F", "-q", "-U", f.UUID}
		case XFS:
			argv = []string{"mkfs.xfs", "-f", "-q", "-m", "uuid=" + f.UUID}
		case Btrfs:
			argv = []string{"mkfs.btrfs", "-f", "-q", "-U", f.UUID}
		case FAT32, VFAT:
			argv = []string{"mkfs.vfat", "-F", "32", "-i", strings.ReplaceAll(f.UUID, "-", "")}
		case Swap:
			argv = []string{"mkswap", "-U", f.UUID}
		}
		if f.Label != "" {
			flag := "-L"
			if fat {
				flag = "-n"
			}
			argv = append(argv, flag, f.Label)
		}
		p.add(Step{Op: "mkfs", Device: f.Device, Argv: append(argv, dev)})
	}
	return nil
}

// mounted are the filesystems mounted at install time, parents first.
func (p *planner) mounted() []Filesystem {
	var out []Filesystem
	for _, f := range p.c.Filesystems {
		if f.MountPoint != "" && f.MountPoint != "none" && f.Type != Swap {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Filesystem) int {
		return strings.Count(strings.TrimSuffix(a.MountPoint, "/"), "/") - strings.Count(strings.TrimSuffix(b.MountPoint, "/"), "/")
	})
	return out
}

// mounts mounts the device filesystems under the target so the image can
// be laid onto them; tmpfs and ramfs come up at boot from fstab.
func (p *planner) mounts() error {
	for _, f := range p.mounted() {
		if f.Type.Special() {
			continue
		}
		dir := p.target + f.MountPoint
		if f.MountPoint == "/" {
			dir = p.target
		}
		p.add(Step{Op: "mkdir", Device: f.Device, Argv: []string{"mkdir", "-p", dir}})
		p.add(Step{Op: "mount", Device: f.Device, Argv: []string{"mount", "-t", fstabType(f.Type), p.path[f.Device], dir}})
	}
	return nil
}

func fstabType(t FSType) string {
	if t == FAT32 {
		return "vfat"
	}
	return string(t)
}

// fstab names devices by UUID, so it holds whatever the kernel calls
// the disks at boot.
func (p *planner) fstab() error {
	var b strings.Builder
	line := func(spec, mp string, t FSType, opts string, pass int) {
		if opts == "" {
			opts = "defaults"
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t0\t%d\n", spec, mp, fstabType(t), opts, pass)
	}
	for _, f := range p.mounted() {
		switch {
		case f.Type.Special():
			line(string(f.Type), f.MountPoint, f.Type, f.MountOptions, 0)
		case f.MountPoint == "/" && (f.Type == Ext4 || f.Type == Ext2):
			line("UUID="+f.UUID, f.MountPoint, f.Type, f.MountOptions, 1)
		case f.Type == Ext4 || f.Type == Ext2 || f.Type == FAT32 || f.Type == VFAT:
			line("UUID="+f.UUID, f.MountPoint, f.Type, f.MountOptions, 2)
		default:
			line("UUID="+f.UUID, f.MountPoint, f.Type, f.MountOptions, 0)
		}
	}
	for _, f := range p.c.Filesystems {
		if f.Type == Swap {
			line("UUID="+f.UUID, "none", Swap, cmp.Or(f.MountOptions, "sw"), 0)
		}
	}
	p.plan.Fstab = b.String()
	return nil
}

// String renders the plan one step a line, as a shell would read it (for
// the timeline and golden tests; the installer runs Argv, not this).
func (pl Plan) String() string {
	var b strings.Builder
	for _, s := range pl.Steps {
		if s.Op == "write" {
			fmt.Fprintf(&b, "echo %s > %s\n", quote(s.Data), s.Path)
			continue
		}
		q := make([]string, len(s.Argv))
		for i, a := range s.Argv {
			q[i] = quote(a)
		}
		b.WriteString(strings.Join(q, " "))
		if s.Stdin != "" {
			fmt.Fprintf(&b, " <<EOF\n%sEOF", s.Stdin)
		}
		b.WriteString("\n")
	}
	b.WriteString("# /etc/fstab\n" + pl.Fstab)
	return b.String()
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:=+,%-]+$`)

func quote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
