package ephemeral

// WantedModules are the drivers the environment loads when the kernel has
// them as modules: NICs, disk controllers and the in-band IPMI interface.
// Missing ones are skipped (and listed in the manifest); ones built into the
// kernel need nothing.
var WantedModules = []string{
	// buses the devices below sit on
	"virtio_pci",
	// NICs
	"virtio_net", "e1000", "e1000e", "igb", "ixgbe", "i40e", "bnxt_en", "tg3", "r8169",
	// disks
	"virtio_blk", "virtio_scsi", "sd_mod", "ahci", "nvme", "ata_piix",
	// in-band IPMI
	"ipmi_msghandler", "ipmi_devintf", "ipmi_si",
	// raw sockets for DHCP
	"af_packet",
	// hardware RNGs, so the kernel's random pool is ready early on
	// machines (and VMs) whose CPU has no RDRAND
	"virtio_rng", "intel_rng", "amd_rng",
	// root filesystem tarballs: ext4 (jbd2, mbcache and crc16 come from
	// modules.dep) and the crc32c ext4 asks the crypto API for at mount
	"ext4", "crc32c_generic", "crc32c_intel",
	// storage layouts: md RAID, LVM (device-mapper), bcache, the
	// filesystems the installer makes, and efivarfs for the boot entry
	"md_mod", "raid0", "raid1", "raid10", "raid456", "dm_mod", "bcache",
	"xfs", "btrfs", "vfat", "nls_cp437", "nls_ascii", "nls_utf8", "nls_iso8859_1", "efivarfs",
}
