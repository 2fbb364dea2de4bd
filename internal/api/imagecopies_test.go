package api_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/anvilmetal/anvil/internal/serve"
)

// TestOneCopyOfAnImage uploads an image to a server whose process runs a
// rack and has a machine's fetch of it answered by that rack's HTTP boot
// server: the bytes are right, and the data directory holds them once
// (in images/, none in the rack's image-cache/).
func TestOneCopyOfAnImage(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		img := bytes.Repeat([]byte("one copy "), 50000)
		sum := sha256.Sum256(img)
		hexSum := hex.EncodeToString(sum[:])
		if code, body := e.upload(e.admin, url.Values{"name": {"custom/once"}, "architecture": {"amd64/generic"},
			"filetype": {"ddraw"}, "sha256": {hexSum}, "size": {strconv.Itoa(len(img))}}, img); code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, body)
		}
		for range 2 { // the second is answered as the first
			resp, err := http.Get("http://" + e.srv.Rack.HTTP.String() + "/images/" + hexSum)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !bytes.Equal(got, img) {
				t.Fatalf("rack answered %s with %d bytes", resp.Status, len(got))
			}
		}
		var copies []string
		filepath.WalkDir(e.dataDir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && d.Name() == hexSum {
				copies = append(copies, p)
			}
			return nil
		})
		if len(copies) != 1 || filepath.Base(filepath.Dir(copies[0])) != "images" {
			t.Errorf("the image is kept at %q; want once, in images/", copies)
		}
		if _, err := os.Stat(filepath.Join(e.dataDir, "image-cache")); !os.IsNotExist(err) {
			t.Errorf("image-cache/ exists beside images/: %v", err)
		}
	}, func(c *serve.Config) { c.BootHTTPAddr = "127.0.0.1:0" })
}
