package debimage

import (
	"os/exec"
	"strings"
	"testing"
)

// The recipe is shell: it parses, and it carries what a deployed machine
// needs (python3-cryptography's cffi backend is the package debootstrap
// cannot resolve on its own).
func TestRecipe(t *testing.T) {
	if out, err := exec.Command("sh", "-n", "-c", Recipe).CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v %s", err, out)
	}
	for _, want := range []string{"--variant=minbase", "linux-image-amd64", "cloud-init", "python3-cffi-backend",
		"openssh-server", "extlinux", "systemd-sysv", "--numeric-owner --xattrs"} {
		if !strings.Contains(Recipe, want) {
			t.Errorf("the recipe lacks %q", want)
		}
	}
}

// The cache key follows the recipe and every option, so a changed recipe
// or mirror never reuses an old tarball.
func TestKey(t *testing.T) {
	base := Key(Options{})
	for name, o := range map[string]Options{
		"suite":  {Suite: "trixie"},
		"mirror": {Mirror: "http://mirror.example/debian"},
	} {
		if Key(o) == base {
			t.Errorf("%s: same key as the defaults", name)
		}
	}
	if Key(Options{}) != base {
		t.Error("the key is not stable")
	}
	saved := Recipe
	defer func() { Recipe = saved }()
	Recipe += "\n# changed\n"
	if Key(Options{}) == base {
		t.Error("a changed recipe has the same key")
	}
}
