package buildcache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	builds := 0
	build := func(dir string) error {
		builds++
		return os.WriteFile(filepath.Join(dir, "done"), []byte("x"), 0o644)
	}
	a, err := Dir(os.TempDir(), "thing", "0123456789abcdef0123", "done", build)
	if err != nil || filepath.Base(a) != "anvil-thing-0123456789abcdef" {
		t.Fatalf("first build: %s, %v", a, err)
	}
	b, err := Dir(os.TempDir(), "thing", "0123456789abcdef0123", "done", build)
	if err != nil || a != b || builds != 1 {
		t.Fatalf("second call: %s, %v, %d builds", b, err, builds)
	}
	// A failed build leaves nothing behind, and says why.
	boom := errors.New("boom")
	if _, err := Dir(os.TempDir(), "thing", "ffff", "done", func(string) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed build: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), "anvil-thing-*"))
	if len(left) != 1 {
		t.Fatalf("left in the temp directory: %v", left)
	}
}
