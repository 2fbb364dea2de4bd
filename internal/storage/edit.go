package storage

import (
	"fmt"
	"slices"
	"strings"
)

// The edits below are the API's custom configuration: each takes a
// configuration and returns the edited one, or an error in MAAS's words
// with nothing changed. They refuse what MAAS's forms refuse; Validate
// still has the last word before a deploy.

// BadRequest is a refusal MAAS answers as plain text (MAASAPIBadRequest).
type BadRequest struct{ Msg string }

func (e *BadRequest) Error() string { return e.Msg }

func badRequest(format string, args ...any) error {
	return &BadRequest{Msg: fmt.Sprintf(format, args...)}
}

func fieldErr(field, format string, args ...any) error {
	e := FieldErrors{}
	e.Add(field, format, args...)
	return e
}

// maasFSType is MAAS's fstype for a device serving a group: what MAAS
// shows and names in its refusals.
func (c Config) groupUse(dev string) string {
	for _, a := range c.RAIDs {
		if slices.Contains(a.Devices, dev) {
			return "raid"
		}
		if slices.Contains(a.Spares, dev) {
			return "raid-spare"
		}
	}
	for _, vg := range c.VolumeGroups {
		if slices.Contains(vg.Devices, dev) {
			return "lvm-pv"
		}
	}
	for _, b := range c.Bcaches {
		if b.Backing == dev {
			return "bcache-backing"
		}
	}
	for _, cs := range c.CacheSets {
		if cs.Device == dev {
			return "bcache-cache"
		}
	}
	return ""
}

func (c Config) fsIndex(dev string) int {
	return slices.IndexFunc(c.Filesystems, func(f Filesystem) bool { return f.Device == dev && dev != "" })
}

// FilesystemOn returns the filesystem formatted on dev.
func (c Config) FilesystemOn(dev string) (Filesystem, bool) {
	if i := c.fsIndex(dev); i >= 0 {
		return c.Filesystems[i], true
	}
	return Filesystem{}, false
}

// GroupUse is MAAS's filesystem type for a device that is a member of a
// RAID, volume group or bcache ("raid", "lvm-pv", ...), or "".
func (c Config) GroupUse(dev string) string { return c.groupUse(dev) }

// Format puts a filesystem of type fs on dev, replacing one it has.
func Format(c Config, dev string, fs FSType, label, uuid string) (Config, error) {
	if !fs.Known() || fs.Special() {
		return c, fieldErr("fstype", "Select a valid choice. %s is not one of the available choices.", fs)
	}
	if _, ok := c.Table(dev); ok {
		return c, fieldErr("__all__", "Cannot format block device with a partition table.")
	}
	if u := c.groupUse(dev); u != "" {
		return c, fieldErr("__all__", "Cannot format a block device that has a filesystem type of %s.", u)
	}
	c = c.clone()
	f := Filesystem{Device: dev, Type: fs, Label: label, UUID: uuid}
	if i := c.fsIndex(dev); i >= 0 {
		c.Filesystems[i] = f
	} else {
		c.Filesystems = append(c.Filesystems, f)
	}
	return c, nil
}

// Unformat removes dev's filesystem.
func Unformat(c Config, dev, what string) (Config, error) {
	i := c.fsIndex(dev)
	if u := c.groupUse(dev); u != "" {
		nice := map[string]string{"raid": "RAID", "raid-spare": "RAID", "lvm-pv": "volume group", "bcache-backing": "Bcache", "bcache-cache": "cache set"}[u]
		return c, badRequest("Filesystem is part of a %s, and cannot be unformatted. Remove %s from %s before unformatting the %s.", nice, what, nice, what)
	}
	if i < 0 {
		return c, badRequest("%s is not formatted.", upper(what))
	}
	if c.Filesystems[i].MountPoint != "" {
		return c, badRequest("Filesystem is mounted and cannot be unformatted. Unmount the filesystem before unformatting the %s.", what)
	}
	c = c.clone()
	c.Filesystems = slices.Delete(c.Filesystems, i, i+1)
	return c, nil
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Mount mounts dev's filesystem at mp (swap: "none") with options.
func Mount(c Config, dev, mp, options string) (Config, error) {
	i := c.fsIndex(dev)
	if i < 0 {
		return c, fieldErr("__all__", "Cannot mount an unformatted partition or block device.")
	}
	if c.Filesystems[i].Type == Swap {
		mp = "none"
	} else if mp == "" {
		return c, fieldErr("mount_point", "This field is required.")
	} else if !absPath(mp) {
		return c, fieldErr("mount_point", "Enter a valid absolute path without spaces, backslashes, # or ..: %q is not one.", mp)
	} else if other, ok := c.FilesystemAt(mp); ok && other.Device != dev {
		return c, fieldErr("mount_point", "%s is already mounted at %s.", fsWhere(other), mp)
	}
	if strings.ContainsAny(options, " \t\n#") {
		return c, fieldErr("mount_options", "Mount options may not contain spaces or #.")
	}
	c = c.clone()
	c.Filesystems[i].MountPoint, c.Filesystems[i].MountOptions = mp, options
	return c, nil
}

func fsWhere(f Filesystem) string {
	if f.Device == "" {
		return string(f.Type)
	}
	return f.Device
}

func absPath(mp string) bool {
	return strings.HasPrefix(mp, "/") && !strings.ContainsAny(mp, " \t\n\\#") && !strings.Contains(mp, "/../") && !strings.HasSuffix(mp, "/..")
}

// Unmount unmounts dev's filesystem, keeping it formatted.
func Unmount(c Config, dev, what string) (Config, error) {
	i := c.fsIndex(dev)
	if i < 0 {
		return c, badRequest("%s is not formatted.", upper(what))
	}
	if c.Filesystems[i].MountPoint == "" {
		return c, badRequest("Filesystem is already unmounted.")
	}
	c = c.clone()
	c.Filesystems[i].MountPoint, c.Filesystems[i].MountOptions = "", ""
	return c, nil
}

// MountSpecial adds a tmpfs or ramfs at mp.
func MountSpecial(c Config, fs FSType, mp, options string) (Config, error) {
	if !fs.Special() {
		return c, fieldErr("fstype", "Select a valid choice. %s is not one of the available choices.", fs)
	}
	if mp == "" {
		return c, fieldErr("mount_point", "This field is required.")
	}
	if !absPath(mp) {
		return c, fieldErr("mount_point", "Enter a valid absolute path without spaces, backslashes, # or ..: %q is not one.", mp)
	}
	if other, ok := c.FilesystemAt(mp); ok {
		return c, fieldErr("mount_point", "%s is already mounted at %s.", fsWhere(other), mp)
	}
	c = c.clone()
	c.Filesystems = append(c.Filesystems, Filesystem{Type: fs, MountPoint: mp, MountOptions: options})
	return c, nil
}

// UnmountSpecial removes the tmpfs or ramfs at mp.
func UnmountSpecial(c Config, mp string) (Config, error) {
	i := slices.IndexFunc(c.Filesystems, func(f Filesystem) bool { return f.Type.Special() && f.MountPoint == mp })
	if i < 0 {
		return c, fieldErr("mount_point", "No special filesystem is mounted at %s.", mp)
	}
	c = c.clone()
	c.Filesystems = slices.Delete(c.Filesystems, i, i+1)
	return c, nil
}

// SetBootDisk makes disk the boot disk.
func SetBootDisk(c Config, dev string) (Config, error) {
	if _, ok := c.Disk(dev); !ok {
		return c, badRequest("Cannot set a virtual block device as the boot disk.")
	}
	c = c.clone()
	c.BootDisk = dev
	return c, nil
}

// TagDisk adds (add) or removes a tag of a physical disk.
func TagDisk(c Config, dev, tag string, add bool) (Config, error) {
	if tag == "" {
		return c, fieldErr("tag", "This field is required.")
	}
	c = c.clone()
	for i := range c.Disks {
		if c.Disks[i].Name != dev {
			continue
		}
		t := slices.DeleteFunc(c.Disks[i].Tags, func(s string) bool { return s == tag })
		if add {
			t = append(t, tag)
		}
		c.Disks[i].Tags = t
		return c, nil
	}
	return c, badRequest("Cannot change the tags of a virtual block device.")
}

// TagPartition adds (add) or removes a tag of a partition.
func TagPartition(c Config, name, tag string, add bool) (Config, error) {
	if tag == "" {
		return c, fieldErr("tag", "This field is required.")
	}
	c = c.clone()
	for i, t := range c.Tables {
		for j, p := range t.Partitions {
			if PartitionName(t.Disk, p.Number) != name {
				continue
			}
			tags := slices.DeleteFunc(slices.Clone(p.Tags), func(s string) bool { return s == tag })
			if add {
				tags = append(tags, tag)
			}
			c.Tables[i].Partitions[j].Tags = tags
			return c, nil
		}
	}
	return c, fmt.Errorf("no partition %s", name)
}

// inUse says what dev serves as, or "".
func (c Config) inUse(dev string) string {
	if _, ok := c.Table(dev); ok {
		return "a partition table"
	}
	if u := c.uses()[dev]; len(u) > 0 {
		return u[0]
	}
	return ""
}
