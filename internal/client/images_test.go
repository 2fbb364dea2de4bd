package client

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestUploadChunkFollowsUploadURI sends a chunk where the server's
// upload_uri says, under the client's base URL (a proxy's prefix kept),
// as a raw octet-stream body.
func TestUploadChunkFollowsUploadURI(t *testing.T) {
	var method, path, ctype string
	var body []byte
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		method, path, ctype = r.Method, r.URL.Path, r.Header.Get("Content-Type")
		body, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"filename":"ddraw","size":10,"complete":false,"received":3}`)
	})
	f, err := c.UploadChunk(context.Background(), "/MAAS/api/2.0/boot-resources/4/upload/9/", []byte("abc"))
	if err != nil {
		t.Fatal(err)
	}
	if method != http.MethodPut || path != "/MAAS/api/2.0/boot-resources/4/upload/9/" || ctype != "application/octet-stream" || string(body) != "abc" {
		t.Errorf("sent %s %s (%s) %q", method, path, ctype, body)
	}
	if f.Received != 3 || f.Complete {
		t.Errorf("decoded %+v", f)
	}
	// An upload URI elsewhere is not followed.
	if _, err := c.UploadChunk(context.Background(), "http://elsewhere.example/upload/", []byte("abc")); err == nil || !strings.Contains(err.Error(), "not under api/2.0/") {
		t.Errorf("foreign upload URI: %v", err)
	}
}
