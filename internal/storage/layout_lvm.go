package storage

// MAAS's names for the lvm layout's volume group and logical volume.
const (
	DefaultVGName = "vgroot"
	DefaultLVName = "lvroot"
)

func (l *layout) cleanLVM() {
	l.vg, l.lv = DefaultVGName, DefaultLVName
	if l.p.VGName != "" {
		l.vg = l.p.VGName
	}
	if l.p.LVName != "" {
		l.lv = l.p.LVName
	}
	for field, v := range map[string]string{"vg_name": l.vg, "lv_name": l.lv} {
		if !validName(v) {
			l.e.Add(field, "%q is not a valid name: use 1 to 63 letters, digits and + _ . - (not starting with -).", v)
		}
	}
	if l.p.LVSize == "" {
		return
	}
	// MAAS measures lv_size against the root partition it will make.
	root := l.rootSize
	if root == 0 {
		root = l.boot.Size - EFIPartitionSize - l.bootSize
	}
	l.lvSize = l.size("lv_size", l.p.LVSize, root, MinRootPartitionSize, root)
}

// lvm is MAAS's LVMStorageLayout: the root partition is the one PV of the
// volume group, and the root logical volume takes lv_size or all of it.
func (l *layout) lvm(c *Config) {
	pv := l.basic(c, l.bootSize)
	vg := VolumeGroup{Name: l.vg, Devices: []string{pv}}
	devs, err := c.Devices()
	if err != nil {
		l.e.Add("__all__", "%s", err.Error())
		return
	}
	free := VGSize(vg, devs)
	size := free
	if l.lvSize > 0 {
		size = RoundDown(l.lvSize, LVMExtentSize)
		if size > free {
			l.e.Add("lv_size", "Size is too large. Maximum size is %d.", free)
		}
	}
	vg.Volumes = []LogicalVolume{{Name: l.lv, Size: size}}
	c.VolumeGroups = append(c.VolumeGroups, vg)
	c.Filesystems = append(c.Filesystems, Filesystem{Device: LVName(l.vg, l.lv), Type: Ext4, Label: "root", MountPoint: "/"})
}
