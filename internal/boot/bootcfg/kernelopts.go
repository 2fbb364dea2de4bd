package bootcfg

import (
	"fmt"
	"strings"
)

// loaderOptions are the options iPXE's bzImage loader looks for itself,
// anywhere in the command line (a substring search, not a word match):
// "mem=" sets the highest address it loads the initrd below, "vga=" the
// video mode. Inside a longer word ("hugemem=1", "novga=1") they are not
// what the kernel reads, yet the loader still acts on them, and a
// "mem=" limit of a few bytes makes every network boot fail with "No
// buffer space available".
var loaderOptions = []string{"mem=", "vga="}

// CheckKernelOpts refuses kernel options an iPXE boot would misread:
// one of loaderOptions inside a word rather than at its start.
func CheckKernelOpts(opts string) error {
	for _, w := range strings.Fields(opts) {
		for _, o := range loaderOptions {
			if i := strings.Index(w, o); i > 0 {
				return fmt.Errorf("%q contains %q, which iPXE's kernel loader reads wherever it appears in the command line "+
					"(as a memory limit or video mode): the machines would not boot; rename the option", w, o)
			}
		}
	}
	return nil
}
