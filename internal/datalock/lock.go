// Package datalock holds a data directory for one process. Two processes
// on one directory would run two power monitors and two racks over one
// embedded database and one boot cache; the second is refused instead,
// in words naming the first. The lock is an flock(2) on DIR/anvil.lock,
// which the kernel drops when the holder exits however it exits, so a
// killed process never leaves a stale lock behind.
package datalock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// File is the lock file's name inside the data directory.
const File = "anvil.lock"

// Lock is a held data directory.
type Lock struct{ f *os.File }

// HeldError says who holds a data directory.
type HeldError struct {
	Dir    string
	Holder string // "pid 1234 (anvil serve)", or "another process" when unreadable
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("data directory %s is in use by %s; stop it, or give this process a --data of its own", e.Dir, e.Holder)
}

// Acquire creates dir if needed and holds it for this process; role
// ("anvil serve", "anvil rack") is written beside the pid so a refused
// process can say what holds the directory.
func Acquire(dir, role string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, File)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &HeldError{Dir: dir, Holder: holder(path)}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The holder's words are rewritten only once the lock is ours.
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(fmt.Sprintf("pid %d (%s)\n", os.Getpid(), role)), 0)
	}
	return &Lock{f: f}, nil
}

func holder(path string) string {
	b, err := os.ReadFile(path)
	if s := strings.TrimSpace(string(b)); err == nil && s != "" {
		return s
	}
	return "another process"
}

// Release lets another process hold the directory. It is safe on nil
// and twice.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor drops the flock
	l.f = nil
	return err
}
