// Package ephemeral builds Anvil's ephemeral environment (kernel and
// initrd) once per test binary, cached across runs under os.TempDir() by
// a hash of the sources that go into it and the kernel version.
package ephemeral

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	builder "github.com/anvilmetal/anvil/internal/ephemeral"
)

var (
	once           sync.Once
	kernel, initrd string
	skip, failure  error
)

// Build returns the paths of the built kernel and initrd, building them the
// first time. The test is skipped when no kernel is installed.
func Build(t testing.TB) (kernelPath, initrdPath string) {
	t.Helper()
	once.Do(build)
	if skip != nil {
		t.Skip(skip)
	}
	if failure != nil {
		t.Fatal(failure)
	}
	return kernel, initrd
}

func build() {
	root, err := builder.ModuleRoot()
	if err != nil {
		failure = err
		return
	}
	dir, err := builder.BuildCached(os.TempDir(), root)
	if errors.Is(err, builder.ErrNoKernel) {
		skip = err
		return
	}
	if err != nil {
		failure = err
		return
	}
	kernel, initrd = filepath.Join(dir, builder.KernelFile), filepath.Join(dir, builder.InitrdFile)
}
