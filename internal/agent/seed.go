package agent

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/anvilmetal/anvil/internal/yamlq"
	"hash/crc32"
	"os"
	"strings"
	"unicode/utf16"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// The first-boot seed: a cloud-init NoCloud data source, a small FAT
// partition labelled CIDATA at the end of the disk, after the image's
// partitions (leaving the space between for the root partition to grow).
const (
	seedSize    = 8 * MiB
	seedMinSize = 4 * MiB
	seedLabel   = "CIDATA"
	sector      = 512
	alignSec    = MiB / sector
)

var errNoRoom = errors.New("no room for the seed partition")

// SeedFile is a file in the seed.
type SeedFile struct {
	Name string
	Data []byte
}

// seedFiles renders the task's first-boot settings as NoCloud files. The
// network configuration is the one the region rendered from the
// machine's interfaces when the task carries one; else it brings up the
// NIC the machine booted from with DHCP, matched by its MAC (the deployed
// OS names NICs its own way).
// osUp, when set, goes in vendor-data as cloud-init's phone_home URL: the
// deployed OS reports there once its first boot is done, which is what
// makes the machine DEPLOYED. Vendor data rather than user data, so the
// owner's user data is written as given (and may still override it).
func seedFiles(t agentapi.Task, bootMAC, osUp string) []SeedFile {
	var md strings.Builder
	fmt.Fprintf(&md, "instance-id: %s\nlocal-hostname: %s\n", yamlq.Quote(t.InstanceID), yamlq.Quote(t.Hostname))
	if len(t.SSHKeys) > 0 {
		md.WriteString("public-keys:\n")
		for _, k := range t.SSHKeys {
			fmt.Fprintf(&md, "  - %s\n", yamlq.Quote(strings.TrimSpace(k)))
		}
	}
	ud := t.UserData
	if len(ud) == 0 {
		ud = []byte("#cloud-config\n{}\n")
	}
	files := []SeedFile{{"meta-data", []byte(md.String())}, {"user-data", ud}}
	if osUp != "" {
		vd := fmt.Sprintf("#cloud-config\nphone_home:\n  url: %s\n  post: [instance_id, hostname]\n  tries: 10\n", yamlq.Quote(osUp))
		files = append(files, SeedFile{"vendor-data", []byte(vd)})
	}
	switch {
	case t.NetworkConfig != "":
		files = append(files, SeedFile{"network-config", []byte(t.NetworkConfig)})
	case bootMAC != "":
		nc := fmt.Sprintf("version: 2\nethernets:\n  boot:\n    match:\n      macaddress: %s\n    set-name: boot0\n    dhcp4: true\n", yamlq.Quote(bootMAC))
		files = append(files, SeedFile{"network-config", []byte(nc)})
	}
	return files
}

// WriteSeed adds the seed partition to the partition table at the start
// of dev (MBR or GPT) and writes the FAT filesystem into it. It returns
// the partition's offset and size in bytes.
func WriteSeed(dev string, diskSize int64, files []SeedFile) (off, size int64, err error) {
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	start, count, commit, err := planSeedPartition(f, diskSize/sector)
	if err != nil {
		return 0, 0, err
	}
	fs, err := MakeFAT(count, seedLabel, files)
	if err != nil {
		return 0, 0, err
	}
	if _, err := f.WriteAt(fs, start*sector); err != nil {
		return 0, 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, 0, err
	}
	// The table last: it points at a complete filesystem.
	if err := commit(); err != nil {
		return 0, 0, err
	}
	return start * sector, count * sector, f.Sync()
}

// seedPlace picks the seed's sectors: seedSize at the aligned end of the
// space [free, end), or what is left down to seedMinSize.
func seedPlace(free, end int64) (start, count int64, err error) {
	free = alignUp(free, alignSec)
	end = end / alignSec * alignSec
	if end-free < seedMinSize/sector {
		return 0, 0, errNoRoom
	}
	count = min(int64(seedSize/sector), end-free)
	return end - count, count, nil
}

// planSeedPartition reads the partition table and returns where the seed
// goes and a function that writes the table with it added.
func planSeedPartition(f *os.File, sectors int64) (start, count int64, commit func() error, err error) {
	mbr := make([]byte, sector)
	if _, err := f.ReadAt(mbr, 0); err != nil {
		return 0, 0, nil, fmt.Errorf("reading the partition table: %w", err)
	}
	if mbr[510] != 0x55 || mbr[511] != 0xAA {
		return 0, 0, nil, errors.New("the image has no partition table")
	}
	for i := range 4 {
		if mbr[446+16*i+4] == 0xEE {
			return planGPT(f, mbr, sectors)
		}
	}
	return planMBR(f, mbr, sectors)
}

func planMBR(f *os.File, mbr []byte, sectors int64) (int64, int64, func() error, error) {
	slot := -1
	var used int64 = 1
	for i := range 4 {
		e := mbr[446+16*i : 446+16*i+16]
		if e[4] == 0 {
			if slot < 0 {
				slot = i
			}
			continue
		}
		s := int64(binary.LittleEndian.Uint32(e[8:]))
		n := int64(binary.LittleEndian.Uint32(e[12:]))
		used = max(used, s+n)
	}
	if slot < 0 {
		return 0, 0, nil, errNoRoom
	}
	// An MBR addresses 2^32 sectors.
	start, count, err := seedPlace(used, min(sectors, 1<<32-1))
	if err != nil {
		return 0, 0, nil, err
	}
	e := mbr[446+16*slot : 446+16*slot+16]
	e[0] = 0x00
	copy(e[1:4], []byte{0xFE, 0xFF, 0xFF}) // CHS unused: LBA only
	e[4] = 0x0E                            // FAT16, LBA
	copy(e[5:8], []byte{0xFE, 0xFF, 0xFF})
	binary.LittleEndian.PutUint32(e[8:], uint32(start))
	binary.LittleEndian.PutUint32(e[12:], uint32(count))
	return start, count, func() error {
		_, err := f.WriteAt(mbr, 0)
		return err
	}, nil
}

// gptBasicData is the "Microsoft basic data" type GUID, as stored.
var gptBasicData = guidBytes("EBD0A0A2-B9E5-4433-87C0-68B6B72699C7")

// planGPT adds the seed to a GPT. The image was made for a smaller disk:
// the backup header and entries move to the disk's end.
func planGPT(f *os.File, mbr []byte, sectors int64) (int64, int64, func() error, error) {
	hdr := make([]byte, sector)
	if _, err := f.ReadAt(hdr, sector); err != nil {
		return 0, 0, nil, err
	}
	if string(hdr[:8]) != "EFI PART" {
		return 0, 0, nil, errors.New("protective MBR without a GPT header")
	}
	hsize := binary.LittleEndian.Uint32(hdr[12:])
	if hsize < 92 || hsize > sector {
		return 0, 0, nil, errors.New("bad GPT header size")
	}
	oldAlt := int64(binary.LittleEndian.Uint64(hdr[32:]))
	firstUsable := int64(binary.LittleEndian.Uint64(hdr[40:]))
	entLBA := int64(binary.LittleEndian.Uint64(hdr[72:]))
	nent := int64(binary.LittleEndian.Uint32(hdr[80:]))
	esize := int64(binary.LittleEndian.Uint32(hdr[84:]))
	if esize < 128 || nent < 1 || nent*esize > 1*MiB {
		return 0, 0, nil, errors.New("bad GPT entry array")
	}
	ents := make([]byte, alignUp(nent*esize, sector))
	if _, err := f.ReadAt(ents, entLBA*sector); err != nil {
		return 0, 0, nil, err
	}
	ents = ents[:nent*esize]
	if crc32.ChecksumIEEE(ents) != binary.LittleEndian.Uint32(hdr[88:]) {
		return 0, 0, nil, errors.New("GPT entry array checksum mismatch")
	}
	slot := int64(-1)
	used := firstUsable
	zero := make([]byte, 16)
	for i := range nent {
		e := ents[i*esize : (i+1)*esize]
		if bytes.Equal(e[:16], zero) {
			if slot < 0 {
				slot = i
			}
			continue
		}
		used = max(used, int64(binary.LittleEndian.Uint64(e[40:]))+1)
	}
	if slot < 0 {
		return 0, 0, nil, errNoRoom
	}
	entSectors := alignUp(nent*esize, sector) / sector
	last := sectors - 1
	lastUsable := last - entSectors - 1
	start, count, err := seedPlace(used, lastUsable+1)
	if err != nil {
		return 0, 0, nil, err
	}
	e := ents[slot*esize : (slot+1)*esize]
	copy(e[0:16], gptBasicData)
	if _, err := rand.Read(e[16:32]); err != nil {
		return 0, 0, nil, err
	}
	e[16+7] = e[16+7]&0x0F | 0x40 // version 4, as stored (mixed endian)
	e[16+8] = e[16+8]&0x3F | 0x80
	binary.LittleEndian.PutUint64(e[32:], uint64(start))
	binary.LittleEndian.PutUint64(e[40:], uint64(start+count-1))
	binary.LittleEndian.PutUint64(e[48:], 0)
	name := utf16.Encode([]rune(seedLabel))
	for i := 56; i < 128; i++ {
		e[i] = 0
	}
	for i, c := range name {
		binary.LittleEndian.PutUint16(e[56+2*i:], c)
	}
	entCRC := crc32.ChecksumIEEE(ents)

	primary := append([]byte(nil), hdr...)
	binary.LittleEndian.PutUint64(primary[32:], uint64(last))
	binary.LittleEndian.PutUint64(primary[48:], uint64(lastUsable))
	binary.LittleEndian.PutUint32(primary[88:], entCRC)
	gptHeaderCRC(primary, hsize)
	backup := append([]byte(nil), primary...)
	binary.LittleEndian.PutUint64(backup[24:], uint64(last))
	binary.LittleEndian.PutUint64(backup[32:], 1)
	binary.LittleEndian.PutUint64(backup[72:], uint64(last-entSectors))
	gptHeaderCRC(backup, hsize)
	// The protective MBR covers the whole disk.
	for i := range 4 {
		pe := mbr[446+16*i : 446+16*i+16]
		if pe[4] == 0xEE {
			binary.LittleEndian.PutUint32(pe[12:], uint32(min(sectors-1, 1<<32-1)))
		}
	}
	commit := func() error {
		pad := make([]byte, entSectors*sector)
		copy(pad, ents)
		writes := []struct {
			b   []byte
			lba int64
		}{
			{pad, last - entSectors},
			{backup, last},
			{pad, entLBA},
			{primary, 1},
			{mbr, 0},
		}
		if oldAlt > 1 && oldAlt < last && oldAlt < start {
			writes = append([]struct {
				b   []byte
				lba int64
			}{{make([]byte, sector), oldAlt}}, writes...)
		}
		for _, w := range writes {
			if _, err := f.WriteAt(w.b, w.lba*sector); err != nil {
				return err
			}
		}
		return nil
	}
	return start, count, commit, nil
}

func gptHeaderCRC(h []byte, size uint32) {
	binary.LittleEndian.PutUint32(h[16:], 0)
	binary.LittleEndian.PutUint32(h[16:], crc32.ChecksumIEEE(h[:size]))
}

// guidBytes encodes a GUID as GPT stores it: the first three fields
// little-endian.
func guidBytes(s string) []byte {
	h := strings.ReplaceAll(s, "-", "")
	var b [16]byte
	for i := range 16 {
		fmt.Sscanf(h[2*i:2*i+2], "%02x", &b[i])
	}
	out := make([]byte, 16)
	out[0], out[1], out[2], out[3] = b[3], b[2], b[1], b[0]
	out[4], out[5] = b[5], b[4]
	out[6], out[7] = b[7], b[6]
	copy(out[8:], b[8:])
	return out
}
