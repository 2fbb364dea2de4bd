package demo

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// claimDir clears only a demo's own directory, and never one another
// demo holds.
func TestClaimDir(t *testing.T) {
	write := func(t *testing.T, dir string, files ...string) {
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, dir string)
		refuse string // part of the error, "" when claimed
	}{
		{"new", func(t *testing.T, dir string) { os.Remove(dir) }, ""},
		{"empty", func(t *testing.T, dir string) {}, ""},
		{"previous run", func(t *testing.T, dir string) { write(t, dir, stateMarker, "serve.log") }, ""},
		{"not a demo's", func(t *testing.T, dir string) { write(t, dir, "precious") }, "is not a lab demo directory"},
		{"held by another demo", func(t *testing.T, dir string) {
			write(t, dir, stateMarker)
			other := &run{cfg: Config{Dir: dir}, out: io.Discard}
			if err := other.claimDir(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(other.cleanup)
		}, "is in use by pid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir)
			d := &run{cfg: Config{Dir: dir}, out: io.Discard}
			err := d.claimDir()
			defer d.cleanup()
			if tc.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refuse) {
					t.Fatalf("claimDir = %v, want an error with %q", err, tc.refuse)
				}
				if _, serr := os.Stat(filepath.Join(dir, "precious")); tc.name == "not a demo's" && serr != nil {
					t.Fatalf("the refused directory lost a file: %v", serr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "serve.log")); err == nil {
				t.Fatal("the previous run's state is still there")
			}
			if _, err := os.Stat(filepath.Join(dir, stateMarker)); err != nil {
				t.Fatalf("no marker: %v", err)
			}
		})
	}
}
