package storage

import (
	"fmt"
	"strings"
)

// Step is one command of a Plan. The installer runs Argv (with Stdin
// when set), or for "write" writes Data to Path; steps run in order and
// the first failure stops the plan.
type Step struct {
	Op     string   `json:"op"`               // table, partition, raid, pv, vg, lv, bcache, write, mkfs, mkdir, mount
	Device string   `json:"device,omitempty"` // the configuration's name for what the step makes or uses
	Argv   []string `json:"argv,omitempty"`
	Stdin  string   `json:"stdin,omitempty"`
	Path   string   `json:"path,omitempty"`
	Data   string   `json:"data,omitempty"`
}

// Plan is what an installer does to lay a Config onto disks: the steps
// up to the filesystems mounted under the target, and the fstab to write
// into the target once the image is in place.
type Plan struct {
	Steps []Step `json:"steps"`
	Fstab string `json:"fstab"`
}

// LVMConfig lets LVM work where no udev runs (the ephemeral environment,
// a container): it makes its own device nodes and scans /dev itself. The
// installer passes it to the LVM commands it runs after the plan too.
const LVMConfig = "activation { udev_sync = 0 udev_rules = 0 } devices { obtain_device_list_from_udev = 0 }"

// MakePlan turns c into the installer's steps. disks maps each disk's
// Name to its device path (/dev/sda, /dev/disk/by-id/..., a loop device);
// target is where the root filesystem is mounted (/target). The same
// input always gives the same plan. c must pass Validate for fw, and
// every filesystem on a device needs a UUID, since fstab names them by
// UUID.
func MakePlan(c Config, fw Firmware, disks map[string]string, target string) (Plan, error) {
	if err := Validate(c, fw); err != nil {
		return Plan{}, err
	}
	p := &planner{c: c, disks: disks, target: strings.TrimRight(target, "/")}
	if err := p.paths(); err != nil {
		return Plan{}, err
	}
	steps := []func() error{p.tables, p.stacks, p.mkfs, p.mounts, p.fstab}
	for _, f := range steps {
		if err := f(); err != nil {
			return Plan{}, err
		}
	}
	return p.plan, nil
}

type planner struct {
	c      Config
	disks  map[string]string
	target string
	path   map[string]string // every device's path
	plan   Plan
}

func (p *planner) add(s Step) { p.plan.Steps = append(p.plan.Steps, s) }

// paths gives each device the path it will have once made.
func (p *planner) paths() error {
	p.path = map[string]string{}
	for _, d := range p.c.Disks {
		if path, ok := p.disks[d.Name]; ok {
			p.path[d.Name] = path
		}
	}
	for _, t := range p.c.Tables {
		dp, ok := p.path[t.Disk]
		if !ok {
			return fmt.Errorf("plan: no device path given for disk %s", t.Disk)
		}
		for _, pt := range t.Partitions {
			p.path[PartitionName(t.Disk, pt.Number)] = PartitionPath(dp, pt.Number)
		}
	}
	for _, r := range p.c.RAIDs {
		p.path[r.Name] = "/dev/md/" + r.Name
	}
	for _, vg := range p.c.VolumeGroups {
		for _, lv := range vg.Volumes {
			p.path[LVName(vg.Name, lv.Name)] = "/dev/" + vg.Name + "/" + lv.Name
		}
	}
	// The kernel numbers bcache devices as they register; the plan
	// registers them in order on a fresh system.
	for i, b := range p.c.Bcaches {
		p.path[b.Name] = fmt.Sprintf("/dev/bcache%d", i)
	}
	for _, f := range p.c.Filesystems {
		if f.Device != "" && p.path[f.Device] == "" {
			return fmt.Errorf("plan: no device path given for %s", f.Device)
		}
	}
	return nil
}

// PartitionPath is the kernel's name for partition n of the disk at
// path: sda → sda2, nvme0n1 and loop0 → nvme0n1p2, loop0p2.
func PartitionPath(disk string, n int) string {
	if last := disk[len(disk)-1]; last >= '0' && last <= '9' {
		return fmt.Sprintf("%sp%d", disk, n)
	}
	return fmt.Sprintf("%s%d", disk, n)
}

// typeCode is the partition's type for sgdisk (GPT) and sfdisk (MBR),
// from what the partition is used as.
func (p *planner) typeCode(name string, pt Partition, t TableType) string {
	gpt, mbr := "8300", "83"
	switch {
	case pt.Type == PartESP:
		gpt, mbr = "ef00", "ef"
	case pt.Type == PartBIOSGrub:
		gpt = "ef02"
	default:
		for _, use := range p.c.uses()[name] {
			switch {
			case strings.Contains(use, "RAID"):
				gpt, mbr = "fd00", "fd"
			case strings.Contains(use, "physical volume"):
				gpt, mbr = "8e00", "8e"
			case use == "a swap filesystem":
				gpt, mbr = "8200", "82"
			}
		}
	}
	if t == MBR {
		return mbr
	}
	return gpt
}

func (p *planner) tables() error {
	for _, t := range p.c.Tables {
		dev := p.path[t.Disk]
		p.add(Step{Op: "wipe", Device: t.Disk, Argv: []string{"wipefs", "--all", "--force", dev}})
		if t.Type == MBR {
			if err := p.mbr(t, dev); err != nil {
				return err
			}
			continue
		}
		p.add(Step{Op: "table", Device: t.Disk, Argv: []string{"sgdisk", "--zap-all", "--clear", dev}})
		for _, pt := range t.Partitions {
			name := PartitionName(t.Disk, pt.Number)
			argv := []string{"sgdisk",
				fmt.Sprintf("--new=%d:%dK:+%dK", pt.Number, pt.Offset/KiB, pt.Size/KiB),
				fmt.Sprintf("--typecode=%d:%s", pt.Number, p.typeCode(name, pt, GPT))}
			if pt.Bootable && pt.Type != PartESP {
				argv = append(argv, fmt.Sprintf("--attributes=%d:set:2", pt.Number)) // legacy BIOS bootable
			}
			p.add(Step{Op: "partition", Device: name, Argv: append(argv, dev)})
		}
		p.add(Step{Op: "reread", Device: t.Disk, Argv: []string{"partx", "--update", dev}})
	}
	return nil
}

// mbr writes an MBR table with sfdisk in one go.
func (p *planner) mbr(t PartitionTable, dev string) error {
	var script strings.Builder
	script.WriteString("label: dos\n")
	for _, pt := range t.Partitions {
		if pt.Number > 4 {
			return fmt.Errorf("plan: %s is a logical MBR partition; the installer makes primary partitions only", PartitionName(t.Disk, pt.Number))
		}
		fmt.Fprintf(&script, "%s : start=%dKiB, size=%dKiB, type=%s", PartitionPath(dev, pt.Number), pt.Offset/KiB, pt.Size/KiB, p.typeCode(PartitionName(t.Disk, pt.Number), pt, MBR))
		if pt.Bootable {
			script.WriteString(", bootable")
		}
		script.WriteString("\n")
	}
	p.add(Step{Op: "table", Device: t.Disk, Argv: []string{"sfdisk", "--wipe", "always", dev}, Stdin: script.String()})
	p.add(Step{Op: "reread", Device: t.Disk, Argv: []string{"partx", "--update", dev}})
	return nil
}
