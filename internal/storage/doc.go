// Package storage is Anvil's storage model: a machine's disks and what is
// built on them (partition tables, partitions, RAID, LVM, bcache,
// filesystems), the layouts MAAS computes (flat, lvm, bcache, blank), the
// checks that refuse a configuration that cannot boot, the storage=
// allocation constraint, and the plan an installer executes.
//
// Everything here is pure: plain values in, plain values out. The store
// persists a Config, the API renders it, the installer runs a Plan.
// Sizes are bytes and follow MAAS's rules (see size.go) so a machine laid
// out by Anvil reports the figures MAAS would.
package storage
