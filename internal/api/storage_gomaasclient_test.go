package api_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/canonical/gomaasclient/entity"
)

// TestGomaasclientStorage drives gomaasclient's storage calls (those
// terraform-provider-maas's block device, partition, RAID, volume group,
// logical volume and bcache resources make) against a running server.
func TestGomaasclientStorage(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		sid, c, must := e.blankForGomaas("tf1", "52:54:00:5a:05:01")
		devs, err := c.BlockDevices.Get(sid)
		must("BlockDevices.Get", err)
		if len(devs) != 3 || devs[0].Name != "sda" || devs[0].Type != "physical" || devs[2].Tags[0] != "ssd" {
			t.Fatalf("block devices: %+v", devs)
		}
		esp, err := c.BlockDevicePartitions.Create(sid, 1, &entity.BlockDevicePartitionParams{Size: 512 << 20, Bootable: true})
		must("BlockDevicePartitions.Create", err)
		_, err = c.BlockDevicePartition.Format(sid, 1, esp.ID, "fat32", "efi")
		must("BlockDevicePartition.Format", err)
		got, err := c.BlockDevicePartition.Mount(sid, 1, esp.ID, "/boot/efi", "umask=0077")
		must("BlockDevicePartition.Mount", err)
		if got.FileSystem.FSType != "fat32" || got.FileSystem.MountPoint != "/boot/efi" || got.DeviceID != 1 || !got.Bootable {
			t.Fatalf("ESP: %+v", got)
		}
		_, err = c.BlockDevicePartition.AddTag(sid, 1, esp.ID, "esp")
		must("BlockDevicePartition.AddTag", err)
		p1, err := c.BlockDevicePartitions.Create(sid, 1, &entity.BlockDevicePartitionParams{})
		must("BlockDevicePartitions.Create", err)
		p2, err := c.BlockDevicePartitions.Create(sid, 2, &entity.BlockDevicePartitionParams{Size: p1.Size})
		must("BlockDevicePartitions.Create", err)
		parts, err := c.BlockDevicePartitions.Get(sid, 1)
		must("BlockDevicePartitions.Get", err)
		if len(parts) != 2 || parts[0].Tags[0] != "esp" {
			t.Fatalf("partitions: %+v", parts)
		}
		raid, err := c.RAIDs.Create(sid, &entity.RAIDCreateParams{Name: "md0", Level: "raid-1", Partitions: []string{strconv.Itoa(p1.ID), strconv.Itoa(p2.ID)}})
		must("RAIDs.Create", err)
		if raid.Level != "raid-1" || len(raid.Devices) != 2 || raid.VirtualDevice.ID == 0 {
			t.Fatalf("RAID: %+v", raid)
		}
		vg, err := c.VolumeGroups.Create(sid, &entity.VolumeGroupCreateParams{Name: "vg0", BlockDevices: []string{strconv.Itoa(raid.VirtualDevice.ID)}})
		must("VolumeGroups.Create", err)
		lv, err := c.VolumeGroup.CreateLogicalVolume(sid, vg.ID, &entity.LogicalVolumeParams{Name: "root", Size: 8 << 30})
		must("VolumeGroup.CreateLogicalVolume", err)
		if lv.Name != "vg0-root" || lv.Size != 8<<30 {
			t.Fatalf("logical volume: %+v", lv)
		}
		_, err = c.BlockDevice.Format(sid, lv.ID, "ext4")
		must("BlockDevice.Format", err)
		bd, err := c.BlockDevice.Mount(sid, lv.ID, "/", "")
		must("BlockDevice.Mount", err)
		if bd.Filesystem.MountPoint != "/" || bd.UsedFor != "ext4 formatted filesystem mounted at /" {
			t.Fatalf("root: %+v", bd)
		}
		// A bcache on the ssd in front of a second logical volume.
		data, err := c.VolumeGroup.CreateLogicalVolume(sid, vg.ID, &entity.LogicalVolumeParams{Name: "data"})
		must("VolumeGroup.CreateLogicalVolume", err)
		cs, err := c.BCacheCacheSets.Create(sid, &entity.BCacheCacheSetParams{CacheDevice: "3"})
		must("BCacheCacheSets.Create", err)
		bc, err := c.BCaches.Create(sid, &entity.BCacheParams{Name: "bcache0", CacheSet: strconv.Itoa(cs.ID), BackingDevice: strconv.Itoa(data.ID), CacheMode: "writeback"})
		must("BCaches.Create", err)
		if bc.CacheMode != "writeback" || bc.BackingDevice.Name != "vg0-data" || bc.CacheSet.ID != cs.ID {
			t.Fatalf("bcache: %+v", bc)
		}
		must("BlockDevice.SetBootDisk", c.BlockDevice.SetBootDisk(sid, 1))
		_, err = c.BlockDevice.AddTag(sid, 2, "mirror")
		must("BlockDevice.AddTag", err)
		one, err := c.BlockDevice.Get(sid, 2)
		must("BlockDevice.Get", err)
		if !strings.Contains(strings.Join(one.Tags, ","), "mirror") || one.PartitionTableType != "GPT" {
			t.Fatalf("sdb: %+v", one)
		}
		vgs, err := c.VolumeGroups.Get(sid)
		must("VolumeGroups.Get", err)
		raids, err := c.RAIDs.Get(sid)
		must("RAIDs.Get", err)
		if len(vgs) != 1 || len(vgs[0].LogicalVolumes) != 2 || len(raids) != 1 {
			t.Fatalf("groups: %+v %+v", vgs, raids)
		}
		vg1, err := c.VolumeGroup.Update(sid, vg.ID, &entity.VolumeGroupUpdateParams{Name: "vg1"})
		must("VolumeGroup.Update", err)
		if vg1.Name != "vg1" || vg1.LogicalVolumes[0].Name != "vg1-root" {
			t.Fatalf("renamed volume group: %+v", vg1)
		}
		sdcPart, err := c.BlockDevicePartitions.Create(sid, 2, &entity.BlockDevicePartitionParams{})
		must("BlockDevicePartitions.Create", err)
		r2, err := c.RAID.Update(sid, raid.ID, &entity.RAIDUpdateParams{Name: "md-root", AddSparePartitions: []string{strconv.Itoa(sdcPart.ID)}})
		must("RAID.Update", err)
		if r2.Name != "md-root" || len(r2.SpareDevices) != 1 {
			t.Fatalf("updated RAID: %+v", r2)
		}
		_, err = c.RAID.Update(sid, raid.ID, &entity.RAIDUpdateParams{RemoveSparePartitions: []string{strconv.Itoa(sdcPart.ID)}})
		must("RAID.Update", err)
		must("BlockDevicePartition.Delete", c.BlockDevicePartition.Delete(sid, 2, sdcPart.ID))
		// Taking it apart, top down; the bottom refuses while used.
		if err := c.RAID.Delete(sid, raid.ID); err == nil {
			t.Fatal("a RAID under a volume group was deleted")
		}
		must("BCache.Delete", c.BCache.Delete(sid, bc.ID))
		must("BCacheCacheSet.Delete", c.BCacheCacheSet.Delete(sid, cs.ID))
		must("VolumeGroup.DeleteLogicalVolume", c.VolumeGroup.DeleteLogicalVolume(sid, vg.ID, data.ID))
		must("VolumeGroup.Delete", c.VolumeGroup.Delete(sid, vg.ID))
		must("RAID.Delete", c.RAID.Delete(sid, raid.ID))
		must("BlockDevicePartition.Delete", c.BlockDevicePartition.Delete(sid, 2, p2.ID))
		if s := e.storage(sid); len(s.VGs)+len(s.RAIDs)+len(s.Bcaches)+len(s.CacheSets) != 0 || len(s.Physical[1].Partitions) != 0 {
			t.Fatalf("left after deleting: %+v", s)
		}
	})
}
