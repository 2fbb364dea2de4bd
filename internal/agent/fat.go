package agent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf16"
)

// MakeFAT renders a FAT16 filesystem of sectors 512-byte sectors, with
// volume label label and files in its root directory under their long
// (VFAT) names. It is the minimum cloud-init's NoCloud data source reads.
func MakeFAT(sectors int64, label string, files []SeedFile) ([]byte, error) {
	const (
		reserved   = 1
		nfats      = 2
		rootEnts   = 512
		rootSecs   = rootEnts * 32 / sector
		maxCluster = 65524
		minCluster = 4085
	)
	if sectors > 0xFFFFFFFF {
		return nil, errors.New("fat: too large")
	}
	spc := int64(1)
	var fatSecs, clusters int64
	for {
		fatSecs = 1
		for {
			clusters = (sectors - reserved - rootSecs - nfats*fatSecs) / spc
			need := alignUp((clusters+2)*2, sector) / sector
			if need <= fatSecs {
				break
			}
			fatSecs = need
		}
		if clusters <= maxCluster || spc == 64 {
			break
		}
		spc *= 2
	}
	if clusters < minCluster || clusters > maxCluster {
		return nil, fmt.Errorf("fat: %d sectors make %d clusters, not a FAT16", sectors, clusters)
	}
	img := make([]byte, sectors*sector)
	bs := img[:sector]
	copy(bs[0:3], []byte{0xEB, 0x3C, 0x90})
	copy(bs[3:11], "MSWIN4.1")
	binary.LittleEndian.PutUint16(bs[11:], sector)
	bs[13] = byte(spc)
	binary.LittleEndian.PutUint16(bs[14:], reserved)
	bs[16] = nfats
	binary.LittleEndian.PutUint16(bs[17:], rootEnts)
	if sectors < 1<<16 {
		binary.LittleEndian.PutUint16(bs[19:], uint16(sectors))
	} else {
		binary.LittleEndian.PutUint32(bs[32:], uint32(sectors))
	}
	bs[21] = 0xF8
	binary.LittleEndian.PutUint16(bs[22:], uint16(fatSecs))
	binary.LittleEndian.PutUint16(bs[24:], 63)
	binary.LittleEndian.PutUint16(bs[26:], 255)
	bs[36] = 0x80
	bs[38] = 0x29
	binary.LittleEndian.PutUint32(bs[39:], uint32(time.Now().Unix()))
	copy(bs[43:54], pad83(label, 11))
	copy(bs[54:62], "FAT16   ")
	bs[62], bs[63] = 0xEB, 0xFE // boot code: loop forever
	bs[510], bs[511] = 0x55, 0xAA

	fat := make([]uint16, fatSecs*sector/2)
	fat[0], fat[1] = 0xFFF8, 0xFFFF
	rootOff := (reserved + nfats*fatSecs) * sector
	dataOff := rootOff + rootSecs*sector
	clusterBytes := spc * sector

	var dir []byte
	dir = append(dir, dirEntry(pad83(label, 11), 0x08, 0, 0)...)
	next := int64(2)
	shorts := map[string]bool{}
	for _, f := range files {
		n := alignUp(int64(len(f.Data)), clusterBytes) / clusterBytes
		if next+n > clusters+2 {
			return nil, errors.New("fat: the files do not fit")
		}
		first := uint16(0)
		if n > 0 {
			first = uint16(next)
			copy(img[dataOff+(next-2)*clusterBytes:], f.Data)
			for i := range n {
				c := next + i
				if i == n-1 {
					fat[c] = 0xFFFF
				} else {
					fat[c] = uint16(c + 1)
				}
			}
			next += n
		}
		short, long := shortName(f.Name, shorts)
		if long {
			dir = append(dir, lfnEntries(f.Name, short)...)
		}
		dir = append(dir, dirEntry(short, 0x20, first, uint32(len(f.Data)))...)
	}
	if len(dir) > rootEnts*32 {
		return nil, errors.New("fat: too many files")
	}
	copy(img[rootOff:], dir)
	for i := range int64(nfats) {
		off := (reserved + i*fatSecs) * sector
		for j, v := range fat {
			binary.LittleEndian.PutUint16(img[off+int64(2*j):], v)
		}
	}
	return img, nil
}

func pad83(s string, n int) []byte {
	b := []byte(strings.ToUpper(s))
	if len(b) > n {
		b = b[:n]
	}
	for len(b) < n {
		b = append(b, ' ')
	}
	return b
}

// shortName makes the 8.3 name of a file; long says the name needs
// long-name entries too.
func shortName(name string, taken map[string]bool) (short []byte, long bool) {
	valid := func(s string) string {
		var b strings.Builder
		for _, r := range strings.ToUpper(s) {
			switch {
			case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("!#$%&'()-@^_`{}~", r):
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	base, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		base, ext = name[:i], name[i+1:]
	}
	vb, ve := valid(base), valid(ext)
	if vb == base && ve == ext && len(vb) <= 8 && len(ve) <= 3 && vb != "" && !taken[vb+"."+ve] {
		taken[vb+"."+ve] = true
		return append(pad83(vb, 8), pad83(ve, 3)...), false
	}
	if len(ve) > 3 {
		ve = ve[:3]
	}
	for n := 1; ; n++ {
		tail := fmt.Sprintf("~%d", n)
		b := vb
		if len(b) > 8-len(tail) {
			b = b[:8-len(tail)]
		}
		b += tail
		if !taken[b+"."+ve] {
			taken[b+"."+ve] = true
			return append(pad83(b, 8), pad83(ve, 3)...), true
		}
	}
}

// lfnChecksum is the short name's checksum long-name entries carry.
func lfnChecksum(short []byte) byte {
	var sum byte
	for _, c := range short[:11] {
		sum = (sum&1)<<7 + sum>>1 + c
	}
	return sum
}

// lfnEntries are the long-name entries that precede a short entry, last
// part first.
func lfnEntries(name string, short []byte) []byte {
	u := utf16.Encode([]rune(name))
	parts := (len(u) + 12) / 13
	sum := lfnChecksum(short)
	var out []byte
	for k := parts; k >= 1; k-- {
		e := make([]byte, 32)
		e[0] = byte(k)
		if k == parts {
			e[0] |= 0x40
		}
		e[11] = 0x0F
		e[13] = sum
		pos := []int{1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30}
		for i, p := range pos {
			j := (k-1)*13 + i
			var c uint16
			switch {
			case j < len(u):
				c = u[j]
			case j == len(u):
				c = 0
			default:
				c = 0xFFFF
			}
			binary.LittleEndian.PutUint16(e[p:], c)
		}
		out = append(out, e...)
	}
	return out
}

func dirEntry(name []byte, attr byte, cluster uint16, size uint32) []byte {
	e := make([]byte, 32)
	copy(e[:11], name)
	e[11] = attr
	now := time.Now()
	if now.Year() < 1980 {
		now = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	t := uint16(now.Hour()<<11 | now.Minute()<<5 | now.Second()/2)
	d := uint16((now.Year()-1980)<<9 | int(now.Month())<<5 | now.Day())
	binary.LittleEndian.PutUint16(e[14:], t)
	binary.LittleEndian.PutUint16(e[16:], d)
	binary.LittleEndian.PutUint16(e[18:], d)
	binary.LittleEndian.PutUint16(e[22:], t)
	binary.LittleEndian.PutUint16(e[24:], d)
	binary.LittleEndian.PutUint16(e[26:], cluster)
	binary.LittleEndian.PutUint32(e[28:], size)
	return e
}
