package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

// tarball returns a small root filesystem tarball.
func tarball(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	body := "anvil\n"
	if err := tw.WriteHeader(&tar.Header{Name: "etc/hostname", Mode: 0o644, Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	io.WriteString(tw, body)
	tw.Close()
	return b.Bytes()
}

// disk returns a raw disk image of n bytes with an MBR boot signature.
func disk(n int) []byte {
	b := make([]byte, n)
	b[510], b[511] = 0x55, 0xaa
	return b
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func xzip(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	w, err := xz.NewWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// Go writes no bzip2, so these were made with bzip2 -9: a tarball of
// etc/hostname, and a 4 KiB disk image with a boot signature.
const (
	bzip2Tar  = "QlpoOTFBWSZTWYBffrwAAHX7hMkQAERAAP+ABABqZ58AAACACCAAdQ1T1NpqAAHqA2o9QSVMJoAAAaBH7SlrUIIPASHWwLr3PK5EkDFuwbFmzc5QSxAVTgtl9xCKHQmh0oQ8fUS45dpIShvRC1nOZ/pPr4JIPxdyRThQkIBffrw="
	bzip2Disk = "QlpoOTFBWSZTWTsJOzUAAAfCEMAQAgAAEAAIIAAwzQCKYmF1lBHtADxdyRThQkDsJOzU"
)

func unbase64(t *testing.T, s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSniffImage(t *testing.T) {
	tb := tarball(t)
	for _, tc := range []struct {
		name    string
		content []byte
		ft      string // the file type, or
		err     string // words of the error
	}{
		{"tgz", gz(tb), "tgz", ""},
		{"txz", xzip(t, tb), "txz", ""},
		{"ddraw", disk(4096), "ddraw", ""},
		{"ddgz", gz(disk(4096)), "ddgz", ""},
		{"ddxz", xzip(t, disk(4096)), "ddxz", ""},
		{"plain tar", tb, "", "uncompressed tarball"},
		{"text", []byte("#!/bin/sh\necho not an image\n"), "", "neither a root filesystem tarball"},
		{"short raw", disk(512)[:300], "", "neither"},
		{"gzip of text", gz([]byte("hello")), "", "gzip-compressed but holds neither"},
		{"broken gzip", append([]byte{0x1f, 0x8b, 8, 0}, bytes.Repeat([]byte{0xff}, 40)...), "", "gzip"},
		{"tbz", unbase64(t, bzip2Tar), "tbz", ""},
		{"bzip2 disk", unbase64(t, bzip2Disk), "", "bzip2-compressed disk image"},
		{"broken bzip2", append([]byte("BZh9"), 0x31, 0x41, 0x59, 0x26), "", "bzip2"},
		{"qcow2", append([]byte{'Q', 'F', 'I', 0xfb}, make([]byte, 100)...), "", "qemu-img convert"},
		{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0}, "", "zstd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sniffImage(bytes.NewReader(tc.content))
			switch {
			case tc.err == "" && (got != tc.ft || err != nil):
				t.Errorf("sniffImage = %q, %v; want %q", got, err, tc.ft)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("sniffImage = %q, %v; want an error with %q", got, err, tc.err)
			}
		})
	}
}

func TestCheckFiletype(t *testing.T) {
	for _, tc := range []struct{ given, found, want, err string }{
		{"", "tgz", "tgz", ""},
		{"tgz", "tgz", "tgz", ""},
		{"ddxz", "tgz", "", "--filetype ddxz, but the content is tgz (a gzip root filesystem tarball)"},
		{"ddtgz", "tgz", "", "Anvil deploys tgz, tbz, txz, ddraw, ddgz, ddxz"},
	} {
		got, err := checkFiletype(tc.given, tc.found)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("checkFiletype(%q, %q) = %q, %v; want %q, %q", tc.given, tc.found, got, err, tc.want, tc.err)
		}
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 4 << 20: "4.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
