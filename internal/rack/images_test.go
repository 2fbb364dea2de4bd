package rack

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/boot"
	"github.com/anvilmetal/anvil/internal/boot/httpboot"
)

// fakeRegion serves images/<sha256> as the region's API does, counting
// requests; corrupt makes it send wrong bytes.
type fakeRegion struct {
	images  map[string][]byte
	hits    atomic.Int32
	corrupt atomic.Bool
	slow    chan struct{} // when set, answers wait for it
}

func (f *fakeRegion) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.hits.Add(1)
	if f.slow != nil {
		<-f.slow
	}
	b, ok := f.images[strings.TrimPrefix(r.URL.Path, "/MAAS/api/2.0/images/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if f.corrupt.Load() {
		b = append([]byte{b[0] ^ 1}, b[1:]...)
	}
	w.Write(b)
}

func testImage() ([]byte, string) {
	b := make([]byte, 5000)
	for i := range b {
		b[i] = byte(i * 7)
	}
	s := sha256.Sum256(b)
	return b, hex.EncodeToString(s[:])
}

func newImageRack(t *testing.T, region *fakeRegion, dir string) (*ImageCache, string) {
	t.Helper()
	rs := httptest.NewServer(region)
	t.Cleanup(rs.Close)
	bootDir := t.TempDir()
	os.WriteFile(filepath.Join(bootDir, "loader.efi"), []byte("loader"), 0o644)
	c := &ImageCache{Next: boot.Dir(bootDir), Dir: dir, Region: rs.URL + "/MAAS/"}
	hs := httptest.NewServer(httpboot.Handler(c, nil))
	t.Cleanup(hs.Close)
	return c, hs.URL
}

func imageGet(t *testing.T, url, rng string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestImageCacheFetchesOnceAndServesRanges(t *testing.T) {
	data, sum := testImage()
	region := &fakeRegion{images: map[string][]byte{sum: data}}
	_, base := newImageRack(t, region, t.TempDir())
	for rng, want := range map[string][]byte{"": data, "bytes=10-99": data[10:100], "bytes=-100": data[4900:], "bytes=4990-": data[4990:]} {
		code, got := imageGet(t, base+"/images/"+sum, rng)
		if (rng == "" && code != http.StatusOK) || (rng != "" && code != http.StatusPartialContent) || !bytes.Equal(got, want) {
			t.Fatalf("%q: %d, %d bytes", rng, code, len(got))
		}
	}
	if n := region.hits.Load(); n != 1 {
		t.Fatalf("region asked %d times, want once", n)
	}
	if code, got := imageGet(t, base+"/loader.efi", ""); code != http.StatusOK || string(got) != "loader" {
		t.Fatalf("other files: %d %q", code, got)
	}
	for _, name := range []string{"images/" + strings.Repeat("0", 64), "images/NOTHEX", "images/../loader.efi"} {
		if code, _ := imageGet(t, base+"/"+name, ""); code != http.StatusNotFound && code != http.StatusBadRequest {
			t.Fatalf("%s: %d", name, code)
		}
	}
}

func TestImageCacheNeverServesCorruptFiles(t *testing.T) {
	data, sum := testImage()
	region := &fakeRegion{images: map[string][]byte{sum: data}}
	dir := t.TempDir()
	_, base := newImageRack(t, region, dir)
	imageGet(t, base+"/images/"+sum, "")

	// Corrupted on disk while the rack runs: its stamp changes, it is
	// hashed again, dropped and fetched again.
	bad := append([]byte{data[0] ^ 0xff}, data[1:]...)
	os.WriteFile(filepath.Join(dir, sum), bad, 0o644)
	os.Chtimes(filepath.Join(dir, sum), time.Now(), time.Now().Add(time.Minute))
	if code, got := imageGet(t, base+"/images/"+sum, ""); code != http.StatusOK || !bytes.Equal(got, data) {
		t.Fatalf("after corruption: %d", code)
	}
	// Corrupt in the cache of a rack that starts: never served.
	os.WriteFile(filepath.Join(dir, sum), bad, 0o644)
	_, base2 := newImageRack(t, region, dir)
	if code, got := imageGet(t, base2+"/images/"+sum, "bytes=0-9"); code != http.StatusPartialContent || !bytes.Equal(got, data[:10]) {
		t.Fatalf("restarted rack with a corrupt cache: %d %x", code, got)
	}
	if n := region.hits.Load(); n != 3 {
		t.Fatalf("region asked %d times, want 3", n)
	}

	// The region sending wrong bytes: refused, nothing cached.
	os.Remove(filepath.Join(dir, sum))
	region.corrupt.Store(true)
	_, base3 := newImageRack(t, region, dir)
	if code, _ := imageGet(t, base3+"/images/"+sum, ""); code == http.StatusOK {
		t.Fatal("corrupt bytes from the region were served")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left in the cache: %v", ents)
	}
}

func TestImageCacheConcurrentRequestsFetchOnce(t *testing.T) {
	data, sum := testImage()
	region := &fakeRegion{images: map[string][]byte{sum: data}, slow: make(chan struct{})}
	_, base := newImageRack(t, region, t.TempDir())
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			if code, got := imageGet(t, base+"/images/"+sum, ""); code != http.StatusOK || !bytes.Equal(got, data) {
				t.Errorf("concurrent request: %d", code)
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	close(region.slow)
	wg.Wait()
	if n := region.hits.Load(); n != 1 {
		t.Fatalf("region asked %d times, want once", n)
	}
}
