package ephemeral

import (
	"compress/gzip"
	"fmt"
	"io"
	"sort"
	"strings"
)

// entry is one member of the initramfs: a regular file or, with Dir, a
// directory.
type entry struct {
	Mode uint32 // permission bits
	Data []byte
	Dir  bool
}

// writeCpio writes files (path → entry, no leading slash) as a gzipped
// newc archive, the format Linux unpacks as its initial root filesystem.
// Entries go in path order so parents come before their children; the
// parents of every file are added when missing.
func writeCpio(w io.Writer, files map[string]entry) error {
	all := make(map[string]entry, len(files))
	for n, f := range files {
		n = strings.Trim(n, "/")
		all[n] = f
		for d := n; strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			if _, ok := all[d]; !ok {
				all[d] = entry{Dir: true, Mode: 0o755}
			}
		}
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	for i, n := range names {
		f := all[n]
		mode, data := f.Mode|0o100000, f.Data
		if f.Dir {
			mode, data = f.Mode|0o040000, nil
		}
		if err := cpioEntry(zw, n, uint32(i+1), mode, data); err != nil {
			return err
		}
	}
	if err := cpioEntry(zw, "TRAILER!!!", 0, 0, nil); err != nil {
		return err
	}
	return zw.Close()
}

func cpioEntry(w io.Writer, name string, ino, mode uint32, data []byte) error {
	nlink := 1
	if mode&0o040000 != 0 {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	buf := make([]byte, 0, len(hdr)+len(name)+8)
	buf = append(buf, hdr...)
	buf = append(buf, name...)
	buf = append(buf, 0)
	buf = align4(buf)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	_, err := w.Write(make([]byte, (4-len(data)%4)%4))
	return err
}

func align4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}
