package api_test

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/anvilmetal/anvil/internal/api"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// Two regions on one PostgreSQL database: an image uploaded to one is
// served by the other, which fetches the bytes once, checks them and keeps
// them; bytes that do not match are refused and not kept.
func TestImagesAcrossRegions(t *testing.T) {
	dbURL := pgtest.URL(t)
	a, _ := startImages(t, dbURL, t.TempDir())
	// Regions sharing a database share its secret key.
	dirB := t.TempDir()
	key, err := os.ReadFile(filepath.Join(a.dataDir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "secret.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := startImages(t, dbURL, dirB)
	data, sum := image(300_000)
	fields := url.Values{"name": {"custom/shared"}, "architecture": {"amd64/generic"}, "filetype": {"ddraw"}, "sha256": {sum}}
	if code, body := a.upload(a.admin, fields, data); code != http.StatusCreated {
		t.Fatalf("upload to region A: %d %s", code, body)
	}
	if len(b.imageFiles()) != 0 {
		t.Fatal("region B has bytes before anyone asked")
	}

	// A peer's request is answered from local bytes only: no loop.
	if code, _, _ := b.raw(http.MethodGet, "images/"+sum, "", "", nil, api.PeerHeader, "http://elsewhere/MAAS/"); code != http.StatusNotFound {
		t.Fatalf("a peer asked region B for bytes it lacks: %d", code)
	}

	// A's copy is damaged: B refuses it and keeps nothing.
	onA := filepath.Join(a.dataDir, "images", sum)
	bad := bytes.Clone(data)
	bad[1000] ^= 0xff
	if err := os.WriteFile(onA, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := b.download(sum, ""); code != http.StatusServiceUnavailable {
		t.Fatalf("region B served damaged bytes: %d %.200s", code, body)
	}
	if files := b.imageFiles(); len(files) != 0 {
		t.Fatalf("region B kept %v from a damaged copy", files)
	}

	if err := os.WriteFile(onA, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, got := b.download(sum, "")
	if code != http.StatusOK || !bytes.Equal(got, data) {
		t.Fatalf("region B: %d, %d bytes", code, len(got))
	}
	if !slices.Contains(b.imageFiles(), sum) {
		t.Fatalf("region B did not keep the image: %v", b.imageFiles())
	}
	// Now B's own: a range, with A's copy gone.
	if err := os.Remove(onA); err != nil {
		t.Fatal(err)
	}
	if code, got := b.download(sum, "bytes=100-199"); code != http.StatusPartialContent || !bytes.Equal(got, data[100:200]) {
		t.Fatalf("range from region B: %d %d bytes", code, len(got))
	}
}
