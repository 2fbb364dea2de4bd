package storage

// tableBuilder lays partitions out on a disk as MAAS's PartitionTable
// does: the first 4 MiB and the last 1 MiB (and on BIOS/GPT another
// 1 MiB for bios_grub) are overhead, sizes round down to 4 MiB, and each
// partition starts where the last ended, so all stay 4 MiB aligned.
type tableBuilder struct {
	disk     Disk
	table    PartitionTable
	overhead int64
	next     int64 // offset of the next partition
}

func newTable(d Disk, typ TableType, biosGrub bool) *tableBuilder {
	b := &tableBuilder{disk: d, table: PartitionTable{Disk: d.Name, Type: typ}, overhead: InitialPartitionOffset + EndOfTableSpace, next: InitialPartitionOffset}
	if typ == GPT && biosGrub {
		// GRUB on BIOS/GPT embeds its core in a bios_grub partition; it
		// sits in the reserved first 4 MiB, so data partitions start at
		// 4 MiB as they do on UEFI, and is number 1 as curtin makes it.
		b.overhead += BIOSGrubSize
		b.table.Partitions = append(b.table.Partitions, Partition{Number: 1, Offset: MiB, Size: BIOSGrubSize, Type: PartBIOSGrub})
	}
	return b
}

// available is the space left for partitions, aligned down.
func (b *tableBuilder) available() int64 {
	used := b.overhead
	for _, p := range b.table.Partitions {
		if p.Type != PartBIOSGrub {
			used += p.Size
		}
	}
	return RoundDown(b.disk.Size-used, PartitionAlignment)
}

// add appends a partition of size bytes (0: the rest of the disk),
// rounded down to the alignment, and returns its device name.
func (b *tableBuilder) add(size int64, bootable bool, typ PartitionType) string {
	if size <= 0 {
		size = b.available()
		if b.table.Type == MBR {
			size = min(size, MaxMBRPartitionSize)
		}
	}
	size = RoundDown(size, PartitionAlignment)
	n := 1
	if k := len(b.table.Partitions); k > 0 {
		n = b.table.Partitions[k-1].Number + 1
	}
	if b.table.Type == MBR && n == 4 {
		n = 5 // MAAS keeps the 4th MBR slot for the extended partition
	}
	b.table.Partitions = append(b.table.Partitions, Partition{Number: n, Offset: b.next, Size: size, Bootable: bootable, Type: typ})
	b.next += size
	return PartitionName(b.disk.Name, n)
}
