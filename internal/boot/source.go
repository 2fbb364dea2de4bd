// Package boot holds what the rack's boot servers (TFTP and HTTP) share:
// the Source they serve files from, and the rules for the names machines
// ask for. The servers know nothing of machines; a Source decides what a
// name means (a file on disk, or a config rendered for one machine).
package boot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Client is what a server knows of who asks.
type Client struct {
	Addr      netip.AddrPort
	Proto     string // "tftp" | "http"
	UserAgent string // HTTP only
}

// File is an open boot file. Size is its length in bytes (it becomes TFTP's
// tsize); Close may be nil when there is nothing to release.
type File struct {
	io.ReadSeeker
	Size    int64
	ModTime time.Time
	Close   func() error
}

// Source answers file requests with names already cleaned by CleanName.
// It returns ErrNotFound when the name is unknown (a per-MAC file of an
// unknown machine is not found, so firmware falls back to the default
// file) and ErrBadName for a name it refuses.
type Source interface {
	Open(ctx context.Context, name string, c Client) (File, error)
}

var (
	ErrNotFound = errors.New("not found")
	// ErrBadName is for names no Source serves: malformed, or leading out
	// of the served tree. Servers answer it as an access violation (TFTP)
	// or 400 (HTTP), never as "not found", so probing shows nothing.
	ErrBadName = errors.New("bad file name")
	// ErrBusy is for a client asking more often than it may: 429 over
	// HTTP, an error over TFTP.
	ErrBusy = errors.New("too many requests")
)

// Observer is told of every file served or refused (for events on
// machines): name, client, bytes sent, duration, error. When err is
// ErrBadName the name is as the client sent it and may hold any bytes:
// quote it before it reaches a log.
type Observer func(name string, c Client, n int64, d time.Duration, err error)

// maxName bounds a name well above any boot path (TFTP's whole request
// fits in 512 bytes) so a hostile client cannot make us carry megabytes.
const maxName = 1024

// CleanName turns what a client asked for into a name relative to the
// served tree: leading slashes dropped, backslashes (Windows firmware)
// made slashes, "a//b" and "./" collapsed. It refuses with ErrBadName
// empty names, "..", control characters and invalid UTF-8: no firmware
// asks for those, and refusing them early keeps them out of Sources and
// logs. CleanName of a clean name returns it unchanged.
func CleanName(name string) (string, error) {
	if len(name) > maxName || !utf8.ValidString(name) {
		return "", ErrBadName
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return "", ErrBadName
		}
	}
	name = strings.ReplaceAll(name, `\`, "/")
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return "", ErrBadName
		}
	}
	name = strings.TrimLeft(path.Clean("/"+name), "/")
	if name == "" {
		return "", ErrBadName
	}
	return name, nil
}

// Dir serves files from a directory, refusing any name that would leave
// it: os.Root refuses "..", absolute paths and symlinks pointing outside,
// whatever the name looked like.
func Dir(root string) Source { return dir(root) }

type dir string

func (d dir) Open(_ context.Context, name string, _ Client) (File, error) {
	name, err := CleanName(name)
	if err != nil {
		return File{}, err
	}
	// The root is opened per request so a tree replaced underneath us
	// (images synced into a new directory, then renamed) is seen at once.
	r, err := os.OpenRoot(string(d))
	if err != nil {
		return File{}, err
	}
	defer r.Close()
	// O_NONBLOCK so a FIFO in the tree cannot hang the request in open;
	// regular files ignore it.
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return File{}, classify(name, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is not a regular file", ErrNotFound, name)
	}
	if err != nil {
		f.Close()
		return File{}, err
	}
	return File{ReadSeeker: f, Size: fi.Size(), ModTime: fi.ModTime(), Close: f.Close}, nil
}

// classify maps an open error onto the Source's errors. os.Root reports a
// path leaving the root with an error of its own, not an errno, so any
// non-errno failure is a refusal of the name; errnos (EIO, EMFILE, ...)
// are real failures and pass through.
func classify(name string, err error) error {
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	case !errors.As(err, &errno):
		return fmt.Errorf("%w: %v", ErrBadName, err)
	}
	return err
}
