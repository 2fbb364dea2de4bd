// Package buildcache keeps what is slow to build (an initramfs, a root
// filesystem tarball) in a cache directory under a name derived from
// everything the build reads, so later runs reuse it, and two building at
// once never see half a build.
package buildcache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Dir returns the directory under root holding the build of name for key
// (a hex hash of the build's inputs), running build into a fresh
// directory first when none holds done, the file a finished build always
// has. The finished build is renamed into place in one step; when another
// process got there first, its build is used.
func Dir(root, name, key, done string, build func(dir string) error) (string, error) {
	if len(key) > 16 {
		key = key[:16]
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("cache %s: %w", root, err)
	}
	dir := filepath.Join(root, "anvil-"+name+"-"+key)
	if _, err := os.Stat(filepath.Join(dir, done)); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(root, "anvil-"+name+"-build-")
	if err != nil {
		return "", err
	}
	if err := build(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	// MkdirTemp makes 0700; what is cached is read by others (a rack
	// serving it, QEMU as another user).
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(dir, done)); serr != nil {
			return "", errors.Join(err, serr)
		}
	}
	return dir, nil
}
