// Package buildcache keeps what tests build slowly (an initramfs, a disk
// image) in the temp directory under a name derived from everything the
// build reads, so later test binaries reuse it, and two building at once
// never see half a build.
package buildcache

import (
	"errors"
	"os"
	"path/filepath"
)

// Dir returns the directory holding the build of name for key (a hex hash
// of the build's inputs), running build into a fresh directory first when
// none holds done, the file a finished build always has. The finished
// build is renamed into place in one step; when another process got there
// first, its build is used.
func Dir(name, key, done string, build func(dir string) error) (string, error) {
	if len(key) > 16 {
		key = key[:16]
	}
	dir := filepath.Join(os.TempDir(), "anvil-"+name+"-"+key)
	if _, err := os.Stat(filepath.Join(dir, done)); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "anvil-"+name+"-build-")
	if err != nil {
		return "", err
	}
	if err := build(tmp); err != nil {
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
