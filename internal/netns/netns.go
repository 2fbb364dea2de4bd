// Package netns runs code inside a named network namespace (one that
// `ip netns add` made, under /var/run/netns). Linux keeps the namespace
// per OS thread, so the code runs on a thread of its own that is switched
// into the namespace and never returns to the Go scheduler's pool:
// sockets it creates belong to the namespace for their whole life and may
// then be used from any goroutine.
package netns

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// Dir is where `ip netns` keeps its namespaces.
const Dir = "/var/run/netns"

// Enter switches the calling goroutine's thread into namespace name. The
// caller must have called runtime.LockOSThread and must never unlock it,
// so that the thread exits with the goroutine rather than serving others
// from inside the namespace.
func Enter(name string) error {
	f, err := os.Open(filepath.Join(Dir, name))
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", name, err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("enter namespace %s: %w", name, err)
	}
	return nil
}

// Call runs fn on a fresh thread inside namespace name and returns what
// it returns. An empty name runs fn here, in the caller's namespace.
func Call[T any](name string, fn func() (T, error)) (T, error) {
	if name == "" {
		return fn()
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see Enter
		if err := Enter(name); err != nil {
			ch <- result{err: err}
			return
		}
		v, err := fn()
		ch <- result{v, err}
	}()
	r := <-ch
	return r.v, r.err
}

// Do is Call for functions that return only an error.
func Do(name string, fn func() error) error {
	_, err := Call(name, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}

// Go runs fn (a server loop, say) on a thread of its own inside namespace
// name, reporting a failure to enter it to fail.
func Go(name string, fn func(), fail func(error)) {
	go func() {
		runtime.LockOSThread() // never unlocked: see Enter
		if err := Enter(name); err != nil {
			fail(err)
			return
		}
		fn()
	}()
}
