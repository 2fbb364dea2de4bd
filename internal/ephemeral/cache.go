package ephemeral

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/anvilmetal/anvil/internal/buildcache"
)

// sourceDirs hold the Go sources the agent and the builder are made of.
var sourceDirs = []string{"cmd/anvil-agent", "internal/agent", "internal/agentapi", "internal/machine", "internal/ephemeral"}

// ErrNoKernel is returned by BuildCached when the build machine has no
// kernel (with its modules) to build the environment from.
var ErrNoKernel = errors.New("no kernel with modules installed (Debian package linux-image-amd64)")

// BuildCached returns a directory under cacheRoot holding a build of the
// environment from the newest installed kernel and the Anvil sources in
// the module at sourceRoot (KernelFile, InitrdFile, ManifestFile),
// building it when no build of the same kernel and sources is there.
func BuildCached(cacheRoot, sourceRoot string) (string, error) {
	kv, err := NewestKernel("/boot")
	if err == nil {
		_, err = os.Stat(filepath.Join("/lib/modules", kv, "modules.dep"))
	}
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoKernel, err)
	}
	key, err := SourceKey(sourceRoot, kv)
	if err != nil {
		return "", err
	}
	return buildcache.Dir(cacheRoot, "ephemeral", key, ManifestFile, func(tmp string) error {
		_, err := Build(Options{Out: tmp, KernelVersion: kv, SourceDir: sourceRoot})
		return err
	})
}

// SourceKey hashes the kernel version, go.mod, go.sum and every non-test
// Go file the environment is built from.
func SourceKey(root, kv string) (string, error) {
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
