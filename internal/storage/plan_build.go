package storage

import (
	"fmt"
	"strconv"
	"strings"
)

// stacks makes RAIDs, volume groups and bcaches, members first.
func (p *planner) stacks() error {
	base, err := p.c.physical()
	if err != nil {
		return err
	}
	order, err := p.c.buildOrder(base)
	if err != nil {
		return err
	}
	attached := map[string]bool{}
	for _, b := range order {
		switch b.kind {
		case KindRAID:
			p.raid(p.c.RAIDs[b.i])
		case KindLV:
			p.lvm(p.c.VolumeGroups[b.i])
		case KindBcache:
			if err := p.bcache(b.i, attached); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *planner) pathsOf(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p.path[n]
	}
	return out
}

func (p *planner) raid(r RAID) {
	level := strings.TrimPrefix(string(r.Level), "raid-")
	argv := []string{"mdadm", "--create", p.path[r.Name], "--run", "--metadata=1.2", "--homehost=any",
		"--name=" + r.Name, "--level=" + level, "--raid-devices=" + strconv.Itoa(len(r.Devices))}
	if len(r.Spares) > 0 {
		argv = append(argv, "--spare-devices="+strconv.Itoa(len(r.Spares)))
	}
	argv = append(argv, p.pathsOf(r.Devices)...)
	p.add(Step{Op: "raid", Device: r.Name, Argv: append(argv, p.pathsOf(r.Spares)...)})
}

func (p *planner) lvm(vg VolumeGroup) {
	for _, pv := range vg.Devices {
		p.add(Step{Op: "pv", Device: pv, Argv: []string{"pvcreate", "--config", LVMConfig, "-ff", "-y", p.path[pv]}})
	}
	p.add(Step{Op: "vg", Device: vg.Name, Argv: append([]string{"vgcreate", "--config", LVMConfig, "-y", vg.Name}, p.pathsOf(vg.Devices)...)})
	for _, lv := range vg.Volumes {
		p.add(Step{Op: "lv", Device: LVName(vg.Name, lv.Name), Argv: []string{"lvcreate", "--config", LVMConfig, "-y", "--wipesignatures", "y",
			"-n", lv.Name, "-L", fmt.Sprintf("%dk", lv.Size/KiB), vg.Name}})
	}
}

// bcache formats the cache once (the first bcache on it) and the backing
// device, registers both with the kernel (udev would; the installer has
// none), attaches by the cache set's UUID and sets the mode.
func (p *planner) bcache(i int, attached map[string]bool) error {
	b := p.c.Bcaches[i]
	cs, _ := p.c.cacheSet(b.CacheSet)
	if cs.UUID == "" {
		return fmt.Errorf("plan: cache set %s has no UUID to attach %s by", cs.Name, b.Name)
	}
	if !attached[cs.Name] {
		attached[cs.Name] = true
		p.add(Step{Op: "bcache", Device: cs.Name, Argv: []string{"make-bcache", "--wipe-bcache", "--cset-uuid", cs.UUID, "-C", p.path[cs.Device]}})
		p.add(Step{Op: "write", Device: cs.Name, Path: "/sys/fs/bcache/register", Data: p.path[cs.Device]})
	}
	dev := strings.TrimPrefix(p.path[b.Name], "/dev/")
	p.add(Step{Op: "bcache", Device: b.Name, Argv: []string{"make-bcache", "--wipe-bcache", "-B", p.path[b.Backing]}})
	p.add(Step{Op: "write", Device: b.Name, Path: "/sys/fs/bcache/register", Data: p.path[b.Backing]})
	p.add(Step{Op: "write", Device: b.Name, Path: "/sys/block/" + dev + "/bcache/attach", Data: cs.UUID})
	p.add(Step{Op: "write", Device: b.Name, Path: "/sys/block/" + dev + "/bcache/cache_mode", Data: string(b.Mode)})
	return nil
}
