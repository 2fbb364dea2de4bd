// Package ephemeral builds Anvil's ephemeral environment (kernel and
// initrd) once per test binary, cached across runs under os.TempDir() by
// a hash of the sources that go into it and the kernel version.
package ephemeral

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/anvilmetal/anvil/internal/testutil/buildcache"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	builder "github.com/anvilmetal/anvil/internal/ephemeral"
)

// sourceDirs hold the Go sources the agent and the builder are made of.
var sourceDirs = []string{"cmd/anvil-agent", "internal/agent", "internal/agentapi", "internal/machine", "internal/ephemeral"}

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
	kv, err := builder.NewestKernel("/boot")
	if err == nil {
		_, err = os.Stat(filepath.Join("/lib/modules", kv, "modules.dep"))
	}
	if err != nil {
		skip = err
		return
	}
	root, err := builder.ModuleRoot()
	if err != nil {
		failure = err
		return
	}
	key, err := sourceHash(root, kv)
	if err != nil {
		failure = err
		return
	}
	dir, err := buildcache.Dir("ephemeral", key, builder.ManifestFile, func(tmp string) error {
		_, err := builder.Build(builder.Options{Out: tmp, KernelVersion: kv, SourceDir: root})
		return err
	})
	if err != nil {
		failure = err
		return
	}
	kernel, initrd = filepath.Join(dir, builder.KernelFile), filepath.Join(dir, builder.InitrdFile)
}

// sourceHash hashes the kernel version, go.mod, go.sum and every non-test
// Go file in sourceDirs.
func sourceHash(root, kv string) (string, error) {
	h := sha256.New()
	io.WriteString(h, kv+"\x00")
	files := []string{"go.mod", "go.sum"}
	for _, d := range sourceDirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				rel, _ := filepath.Rel(root, p)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		io.WriteString(h, f+"\x00")
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
