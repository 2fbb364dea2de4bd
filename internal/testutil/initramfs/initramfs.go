// Package initramfs writes a gzipped newc cpio archive, the format Linux
// unpacks as its initial root filesystem. Tests build small ones (busybox
// and an /init script) to prove a machine booted what Anvil served.
package initramfs

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// File is one entry: a regular file, a directory (Dir), or a symlink
// (Link).
type File struct {
	Mode uint32 // permission bits
	Data []byte
	Dir  bool
	Link string
}

// Write writes files (path → entry, paths without a leading slash) as a
// gzipped newc archive. Parent directories must be listed; entries are
// written in path order so parents come first.
func Write(w io.Writer, files map[string]File) error {
	zw := gzip.NewWriter(w)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	ino := uint32(1)
	for _, n := range names {
		f := files[n]
		mode, data := f.Mode|0o100000, f.Data
		switch {
		case f.Dir:
			mode, data = f.Mode|0o040000, nil
		case f.Link != "":
			mode, data = 0o120777, []byte(f.Link)
		}
		if err := entry(zw, strings.TrimPrefix(n, "/"), ino, mode, data); err != nil {
			return err
		}
		ino++
	}
	if err := entry(zw, "TRAILER!!!", 0, 0, nil); err != nil {
		return err
	}
	return zw.Close()
}

func entry(w io.Writer, name string, ino, mode uint32, data []byte) error {
	nlink := uint32(1)
	if mode&0o040000 != 0 {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	buf := append([]byte(hdr), name...)
	buf = append(buf, 0)
	buf = pad(buf)
	buf = append(buf, data...)
	buf = pad(buf)
	_, err := w.Write(buf)
	return err
}

func pad(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// Busybox returns an initramfs tree with a static busybox (Debian's
// busybox-static puts it at /bin/busybox) and init as /init.
func Busybox(init string) (map[string]File, error) {
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return nil, fmt.Errorf("busybox (package busybox-static): %w", err)
	}
	files := map[string]File{
		"bin": {Dir: true, Mode: 0o755}, "bin/busybox": {Mode: 0o755, Data: bb},
		"dev": {Dir: true, Mode: 0o755}, "proc": {Dir: true, Mode: 0o755}, "sys": {Dir: true, Mode: 0o755},
		"init": {Mode: 0o755, Data: []byte(init)},
	}
	for _, applet := range []string{"sh", "mount", "echo", "cat", "poweroff", "sleep", "ip", "udhcpc", "wget", "reboot"} {
		files["bin/"+applet] = File{Link: "busybox"}
	}
	return files, nil
}
