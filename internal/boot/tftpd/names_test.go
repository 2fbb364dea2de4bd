package tftpd

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"path"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/anvilmetal/anvil/internal/boot"
)

// Raw requests pin the error codes, whatever a client prints of them.
func TestErrorCodes(t *testing.T) {
	// Short timeouts: the transfers started here are never ACKed, and
	// Shutdown waits for them to give up.
	port, events := serve(t, Options{Timeout: 50 * time.Millisecond, Retries: 2})
	for _, c := range []struct {
		op   uint16
		name string
		want string
	}{
		{1, "nothing", "code 1: File not found"},
		{1, "pxelinux.cfg/01-52-54-00-12-34-56", "code 1: File not found"},
		{1, "pxelinux.cfg", "code 1: File not found"}, // a directory
		{1, "/etc/passwd", "code 1: File not found"},
		{1, "../secret", "code 2: Access violation"},
		{1, `..\secret`, "code 2: Access violation"},
		{1, "escape", "code 2: Access violation"}, // symlink out of the tree
		{1, "a\x01b", "code 2: Access violation"},
		{1, "a\x7fb", "code 2: Access violation"},
		{1, "\xff\xfe", "code 2: Access violation"},
		{1, "", "code 2: Access violation"},
		{1, "/", "code 2: Access violation"},
		{2, "upload", "code 2: Access violation"},
		{2, "b511", "code 2: Access violation"},
	} {
		if got := tftpError(request(t, port, c.op, c.name)); got != c.want {
			t.Errorf("op %d %q: got %s, want %s", c.op, c.name, got, c.want)
		}
	}
	for _, e := range events() {
		if e.err == nil || e.n != 0 {
			t.Errorf("observer heard %+v", e)
		}
	}
	// A served file starts with DATA block 1 (no options asked).
	if p := request(t, port, 1, `\pxelinux.cfg//./default`); len(p) != 4+300 || binary.BigEndian.Uint32(p) != 3<<16|1 {
		t.Errorf("RRQ with a messy name: got %q", p[:min(len(p), 8)])
	}
}

// Packets no client sends must leave the server serving.
func TestMalformedPackets(t *testing.T) {
	port, _ := serve(t, Options{Timeout: 50 * time.Millisecond, Retries: 2})
	long := strings.Repeat("a", 70000)
	for _, p := range []string{
		"", "\x00", "\x00\x01", "\x00\x01\x00", "\x00\x01a", "\x00\x01a\x00",
		"\x00\x09junk", "\xff\xff", "\x00\x03\x00\x01data", "\x00\x04\x00\x01", "\x00\x05\x00\x01oops\x00",
		"\x00\x06blksize\x00512\x00",
		"\x00\x01b511\x00octet\x00blksize\x00", // option without value
		"\x00\x01b511\x00octet\x00blksize\x00abc\x00",
		"\x00\x01b511\x00octet\x00blksize\x00-1\x00tsize\x00x\x00",
		"\x00\x01b511\x00octet\x00blksize\x0099999999999999999999\x00",
		"\x00\x01b511\x00bogusmode\x00",
		"\x00\x01" + long[:600] + "\x00octet\x00", // longer than the library's buffer
		"\x00\x01" + long[:60000] + "\x00octet\x00",
	} {
		send(t, port, []byte(p))
	}
	if p := request(t, port, 1, "b513", "blksize", "1468", "tsize", "0"); !bytes.HasPrefix(p, []byte{0, 6}) {
		t.Fatalf("server no longer answers: %q", p)
	}
}

// FuzzNames feeds hostile names to the name handling and the directory
// Source: nothing outside the tree is ever opened, and a name that is
// accepted is clean.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"pxelinux.0", "/grub/grub.cfg", `\boot\x86\wdsnbp.com`, "../secret", "a/../../secret",
		"escape", "a\x00b", "./././b511", "pxelinux.cfg/..", "//", "...", "..\\..", "\u0085", "a\u2028b"} {
		f.Add(s)
	}
	src := boot.Dir(root(f))
	f.Fuzz(func(t *testing.T, name string) {
		clean, err := boot.CleanName(name)
		if err != nil {
			if !errors.Is(err, boot.ErrBadName) {
				t.Fatalf("CleanName(%q): %v", name, err)
			}
		} else {
			if again, err := boot.CleanName(clean); again != clean || err != nil {
				t.Fatalf("CleanName(%q) = %q, again %q %v", name, clean, again, err)
			}
			if clean == "" || strings.HasPrefix(clean, "/") || strings.Contains(clean, `\`) || path.Clean(clean) != clean ||
				clean == ".." || strings.HasPrefix(clean, "../") || !utf8.ValidString(clean) {
				t.Fatalf("CleanName(%q) = %q", name, clean)
			}
		}
		file, err := src.Open(context.Background(), name, boot.Client{})
		if err != nil {
			return
		}
		defer file.Close()
		b, _ := io.ReadAll(file)
		if bytes.Equal(b, []byte("secret\n")) {
			t.Fatalf("Open(%q) left the tree", name)
		}
	})
}
