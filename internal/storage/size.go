package storage

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Binary units.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
)

// MAAS's sizes (partitiontable.py, partition.py, blockdevice.py,
// storage_layouts.py, filesystemgroup.py). Keeping the same figures means
// a layout computed here matches the one MAAS would show for that disk.
const (
	// PartitionAlignment: every partition starts and ends on a 4 MiB
	// boundary; requested sizes are rounded down to it.
	PartitionAlignment = 4 * MiB
	MinPartitionSize   = PartitionAlignment
	MinBlockDeviceSize = 4 * MiB
	// The first 4 MiB hold the table (and on BIOS/GPT the bios_grub
	// partition); 1 MiB at the end is left for GPT's backup table.
	InitialPartitionOffset = 4 * MiB
	EndOfTableSpace        = 1 * MiB
	BIOSGrubSize           = 1 * MiB
	EFIPartitionSize       = 512 * MiB
	MinBootPartitionSize   = 512 * MiB
	MinRootPartitionSize   = 3 * GiB
	// The bcache layout always has a /boot, 1 GiB unless told otherwise.
	DefaultBcacheBootSize = 1 * GiB
	// LVM reserves one 4 MiB extent per physical volume for its headers.
	LVMExtentSize = 4 * MiB
	// mdadm's superblock, as MAAS accounts for it.
	RAIDSuperblockOverhead = 128 * KiB
)

// MaxMBRPartitionSize is the largest partition an MBR table addresses
// (2^32-1 sectors of 512 bytes, less 1 MiB), aligned down.
var MaxMBRPartitionSize = RoundDown(((1<<32)-1)*512-MiB, PartitionAlignment)

// RoundDown rounds size down to a multiple of block.
func RoundDown(size, block int64) int64 { return size / block * block }

// RoundUp rounds size up to a multiple of block.
func RoundUp(size, block int64) int64 {
	n := size / block
	if size%block > 0 {
		n++
	}
	return n * block
}

// Size is a requested size: bytes, or a percentage of what is available.
type Size struct {
	Bytes     int64
	Percent   float64 // used when IsPercent
	IsPercent bool
}

// Of returns the size in bytes given the total a percentage refers to;
// percentages round up, as MAAS's calculate_size_from_percentage does.
func (s Size) Of(total int64) int64 {
	if !s.IsPercent {
		return s.Bytes
	}
	return int64(math.Ceil(float64(total) * s.Percent / 100))
}

var sizeRE = regexp.MustCompile(`^(?:([0-9]+(?:\.[0-9]+)?)%|([0-9]+)([KkMmGgTtPpEe]?))$`)

// ParseSize reads a size in MAAS's form: bytes ("4096"), SI suffixes
// ("10G" is 10^10 bytes, as MAAS's machine_readable_bytes reads it), or a
// percentage ("50%").
func ParseSize(v string) (Size, error) {
	v = strings.TrimSpace(v)
	m := sizeRE.FindStringSubmatch(v)
	if m == nil {
		return Size{}, fmt.Errorf("%q is not a size: give bytes, a number with K, M, G, T, P or E (powers of 1000), or a percentage", v)
	}
	if m[1] != "" {
		p, err := strconv.ParseFloat(m[1], 64)
		if err != nil || p <= 0 || p > 100 {
			return Size{}, fmt.Errorf("%q is not a percentage between 0 and 100", v)
		}
		return Size{Percent: p, IsPercent: true}, nil
	}
	n, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil {
		return Size{}, fmt.Errorf("%q is too large", v)
	}
	mult := map[string]int64{"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15, "e": 1e18}[strings.ToLower(m[3])]
	if n > math.MaxInt64/mult {
		return Size{}, fmt.Errorf("%q is too large", v)
	}
	return Size{Bytes: n * mult}, nil
}
