package httpboot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/boot"
)

const kernelSize = 3<<20 + 7

// fixture is a boot tree behind a real HTTP server on loopback, and what
// the Observer heard.
type fixture struct {
	url    string
	kernel []byte
	mu     sync.Mutex
	events []event
}

type event struct {
	name string
	c    boot.Client
	n    int64
	err  error
}

func (f *fixture) last() event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.events[len(f.events)-1]
}

// files are served from a directory, except "rendered.ipxe.cfg" which,
// like a config rendered per machine, has no ModTime.
type source struct{ dir boot.Source }

func (s source) Open(ctx context.Context, name string, c boot.Client) (boot.File, error) {
	if name == "rendered/ipxe.cfg" {
		b := []byte("#!ipxe\nchain http://rack/boot\n")
		return boot.File{ReadSeeker: bytes.NewReader(b), Size: int64(len(b))}, nil
	}
	if name == "broken" {
		return boot.File{}, errors.New("database is down")
	}
	return s.dir.Open(ctx, name, c)
}

func start(t *testing.T) *fixture {
	dir := t.TempDir()
	f := &fixture{kernel: make([]byte, kernelSize)}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range f.kernel {
		f.kernel[i] = byte(r.Uint32())
	}
	files := map[string][]byte{
		"root/images/ubuntu/boot-kernel": f.kernel,
		"root/grub/grub.cfg":             []byte("set default=0\n"),
		"root/pxelinux.cfg/default":      []byte("DEFAULT local\n"),
		"root/empty":                     nil,
		"secret":                         []byte("secret\n"),
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../secret", filepath.Join(dir, "root", "escape")); err != nil {
		t.Fatal(err)
	}
	obs := func(name string, c boot.Client, n int64, d time.Duration, err error) {
		f.mu.Lock()
		f.events = append(f.events, event{name, c, n, err})
		f.mu.Unlock()
	}
	srv := httptest.NewServer(Handler(source{boot.Dir(filepath.Join(dir, "root"))}, obs))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func TestGoClient(t *testing.T) {
	f := start(t)
	get := func(method, path string, hdr ...string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, f.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	const kernel = "/images/ubuntu/boot-kernel"

	resp, b := get("GET", kernel, "User-Agent", "UEFI-HTTPBoot/1.0")
	if resp.StatusCode != 200 || !bytes.Equal(b, f.kernel) || resp.ContentLength != kernelSize ||
		resp.Header.Get("Content-Type") != "application/octet-stream" || resp.Header.Get("Last-Modified") == "" ||
		resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("GET: %d, %d bytes, %v", resp.StatusCode, len(b), resp.Header)
	}
	if e := f.last(); e.name != "images/ubuntu/boot-kernel" || e.n != kernelSize || e.err != nil ||
		e.c.Proto != "http" || e.c.UserAgent != "UEFI-HTTPBoot/1.0" || !e.c.Addr.Addr().IsLoopback() {
		t.Errorf("observer heard %+v", e)
	}

	resp, b = get("GET", kernel, "Range", "bytes=100-199")
	if resp.StatusCode != 206 || !bytes.Equal(b, f.kernel[100:200]) ||
		resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 100-199/%d", kernelSize) {
		t.Errorf("Range 100-199: %d %d bytes %v", resp.StatusCode, len(b), resp.Header)
	}
	if e := f.last(); e.n != 100 {
		t.Errorf("observer heard %+v of a 100-byte range", e)
	}
	resp, b = get("GET", kernel, "Range", "bytes=-10")
	if resp.StatusCode != 206 || !bytes.Equal(b, f.kernel[kernelSize-10:]) {
		t.Errorf("Range -10: %d %d bytes", resp.StatusCode, len(b))
	}
	resp, _ = get("GET", kernel, "Range", fmt.Sprintf("bytes=%d-", kernelSize))
	if resp.StatusCode != 416 {
		t.Errorf("Range past the end: %d", resp.StatusCode)
	}
	resp, b = get("HEAD", kernel)
	if resp.StatusCode != 200 || len(b) != 0 || resp.ContentLength != kernelSize {
		t.Errorf("HEAD: %d %d %d", resp.StatusCode, len(b), resp.ContentLength)
	}
	resp, _ = get("GET", kernel, "If-Modified-Since", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
	if resp.StatusCode != 304 {
		t.Errorf("If-Modified-Since: %d", resp.StatusCode)
	}

	for path, want := range map[string]string{
		"/grub/grub.cfg": "text/plain", "/pxelinux.cfg/default": "text/plain",
		"/rendered/ipxe.cfg": "text/plain", "/empty": "application/octet-stream",
	} {
		resp, b := get("GET", path)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want || resp.ContentLength != int64(len(b)) {
			t.Errorf("GET %s: %d %v", path, resp.StatusCode, resp.Header)
		}
		if path == "/rendered/ipxe.cfg" && resp.Header.Get("Last-Modified") != "" {
			t.Errorf("a rendered config has Last-Modified %s", resp.Header.Get("Last-Modified"))
		}
	}

	for path, want := range map[string]int{
		"/nothing": 404, "/grub/grub.cfg-01-52-54-00-12-34-56": 404, "/grub": 404, "/etc/passwd": 404,
		"/%2e%2e/secret": 400, "/images/%2e%2e/%2e%2e/secret": 400, "/..%5csecret": 400,
		"/escape": 400, "/a%00b": 400, "/a%0ab": 400, "/": 400, "/broken": 500,
	} {
		if resp, _ := get("GET", path); resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS"} {
		if resp, _ := get(m, kernel); resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d %v", m, resp.StatusCode, resp.Header)
		}
	}
}

func TestCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed (Debian: curl)")
	}
	f := start(t)
	dir := t.TempDir()
	curl := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("curl", append([]string{"-sS", "--max-time", "60"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %v: %v %s", args, err, out)
		}
		return string(out)
	}
	kernel := f.url + "/images/ubuntu/boot-kernel"
	check := func(what, path string, want []byte) {
		t.Helper()
		if b, _ := os.ReadFile(path); !bytes.Equal(b, want) {
			t.Errorf("%s: got %d bytes, want %d", what, len(b), len(want))
		}
	}

	if code := curl("-o", filepath.Join(dir, "k"), "-w", "%{http_code}", kernel); code != "200" {
		t.Errorf("GET: %s", code)
	}
	check("GET", filepath.Join(dir, "k"), f.kernel)
	if code := curl("-o", filepath.Join(dir, "r"), "-w", "%{http_code}", "-r", "100-199", kernel); code != "206" {
		t.Errorf("Range: %s", code)
	}
	check("Range 100-199", filepath.Join(dir, "r"), f.kernel[100:200])
	curl("-o", filepath.Join(dir, "t"), "-r", "-10", kernel)
	check("Range -10", filepath.Join(dir, "t"), f.kernel[kernelSize-10:])
	// Resuming a cut download, as firmware retrying would.
	if err := os.WriteFile(filepath.Join(dir, "c"), f.kernel[:1<<20], 0o644); err != nil {
		t.Fatal(err)
	}
	curl("-o", filepath.Join(dir, "c"), "-C", "-", kernel)
	check("resume", filepath.Join(dir, "c"), f.kernel)

	head := curl("-I", kernel)
	if !strings.Contains(head, "200 OK") || !strings.Contains(head, "Content-Length: "+strconv.Itoa(kernelSize)) {
		t.Errorf("HEAD: %s", head)
	}
	for args, want := range map[string]string{
		"/nothing": "404", "--path-as-is /../secret": "400", "-X POST /empty": "405", "-X PUT /empty": "405",
	} {
		a := strings.Fields(args)
		a[len(a)-1] = f.url + a[len(a)-1]
		if code := curl(append([]string{"-o", "/dev/null", "-w", "%{http_code}"}, a...)...); code != want {
			t.Errorf("curl %s: %s, want %s", args, code, want)
		}
	}
}
