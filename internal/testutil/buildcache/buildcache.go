// Package buildcache keeps what tests build slowly in the temp directory:
// internal/buildcache rooted at os.TempDir(), so every test binary of a
// run, and later runs, share one build.
package buildcache

import (
	"os"

	"github.com/anvilmetal/anvil/internal/buildcache"
)

// Dir is buildcache.Dir under os.TempDir().
func Dir(name, key, done string, build func(dir string) error) (string, error) {
	return buildcache.Dir(os.TempDir(), name, key, done, build)
}
