package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/api"
	"github.com/anvilmetal/anvil/internal/images"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// startImages runs the API with an image store over dataDir, as a server
// process does; stop ends it (a restart is stop, then startImages again on
// the same directory and database).
func startImages(t *testing.T, dbURL, dataDir string) (e *env, stop func()) {
	t.Helper()
	ctx := context.Background()
	st, err := serve.OpenStore(ctx, dataDir, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := images.Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := region.New(st, power.NewRegistry(power.Manual{}), machine.DefaultConfig(), power.Config{}, log)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	self := ts.URL + "/MAAS/"
	mux.Handle(api.Prefix, api.New(svc, log, api.Options{Images: imgs, Self: self}))
	if err := st.TouchRegion(ctx, self); err != nil {
		t.Fatal(err)
	}
	e = &env{t: t, base: ts.URL + "/MAAS/", dataDir: dataDir, dbURL: dbURL}
	for _, u := range []struct {
		name  string
		admin bool
		key   *string
	}{{"admin", true, &e.admin}, {"alice", false, &e.user}} {
		if _, err := st.EnsureUser(ctx, u.name, u.admin); err != nil {
			t.Fatal(err)
		}
		tok, err := st.CreateToken(ctx, u.name)
		if err != nil {
			t.Fatal(err)
		}
		*u.key = tok.APIKey()
	}
	var stopped bool
	stop = func() {
		if !stopped {
			stopped = true
			ts.Close()
			st.Close()
		}
	}
	t.Cleanup(stop)
	return e, stop
}

func eachImagesDB(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Run("sqlite", func(t *testing.T) { e, _ := startImages(t, "", t.TempDir()); fn(t, e) })
	t.Run("postgres", func(t *testing.T) { e, _ := startImages(t, pgtest.URL(t), t.TempDir()); fn(t, e) })
}

// raw sends a request with a body of its own type and returns status,
// body and headers.
func (e *env) raw(method, path, key, ctype string, body io.Reader, hdr ...string) (int, []byte, http.Header) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+"api/2.0/"+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if key != "" {
		req.Header.Set("Authorization", oauth(key))
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

// upload is a one-request create: multipart, content first (the MAAS CLI
// sends fields in any order).
func (e *env) upload(key string, fields url.Values, content []byte) (int, []byte) {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("content", "image.raw")
	fw.Write(content)
	for k, vs := range fields {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	mw.Close()
	code, b, _ := e.raw(http.MethodPost, "boot-resources/", key, mw.FormDataContentType(), &buf)
	return code, b
}

type apiBootFile struct {
	Filename  string  `json:"filename"`
	Filetype  string  `json:"filetype"`
	SHA256    string  `json:"sha256"`
	Size      int64   `json:"size"`
	Complete  bool    `json:"complete"`
	Progress  float64 `json:"progress"`
	Received  int64   `json:"received"`
	UploadURI string  `json:"upload_uri"`
}

type apiBootResource struct {
	ID           int64  `json:"id"`
	Type         string `json:"type"`
	Name         string `json:"name"`
	Architecture string `json:"architecture"`
	ResourceURI  string `json:"resource_uri"`
	Subarches    string `json:"subarches"`
	Title        string `json:"title"`
	BaseImage    string `json:"base_image"`
	Sets         map[string]struct {
		Version  string                 `json:"version"`
		Label    string                 `json:"label"`
		Size     int64                  `json:"size"`
		Complete bool                   `json:"complete"`
		Files    map[string]apiBootFile `json:"files"`
	} `json:"sets"`
}

// only returns the resource's one file.
func (r apiBootResource) only(t *testing.T) apiBootFile {
	t.Helper()
	if len(r.Sets) != 1 {
		t.Fatalf("resource has %d sets, want 1: %+v", len(r.Sets), r)
	}
	for _, s := range r.Sets {
		for _, f := range s.Files {
			return f
		}
	}
	t.Fatal("set without files")
	return apiBootFile{}
}

func image(n int) ([]byte, string) {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(n), byte(n >> 8)})
	r.Read(b)
	s := sha256.Sum256(b)
	return b, hex.EncodeToString(s[:])
}

func (e *env) download(sum, rng string) (int, []byte) {
	e.t.Helper()
	var h []string
	if rng != "" {
		h = []string{"Range", rng}
	}
	code, b, _ := e.raw(http.MethodGet, "images/"+sum, "", "", nil, h...)
	return code, b
}

// imageFiles lists the names in DATA/images other than the .partial
// directory.
func (e *env) imageFiles() []string {
	ents, _ := os.ReadDir(filepath.Join(e.dataDir, "images"))
	var out []string
	for _, d := range ents {
		if d.Name() != ".partial" {
			out = append(out, d.Name())
		}
	}
	return out
}

func TestBootResourceOneRequestUpload(t *testing.T) {
	eachImagesDB(t, func(t *testing.T, e *env) {
		data, sum := image(100_000)
		fields := url.Values{"name": {"custom/noble-web"}, "architecture": {"amd64/generic"}, "filetype": {"ddraw"},
			"title": {"Noble web"}, "base_image": {"ubuntu/noble"}, "sha256": {sum}, "size": {"100000"}}
		if code, b := e.upload(e.user, fields, data); code != http.StatusForbidden {
			t.Fatalf("non-admin upload: %d %s", code, b)
		}
		if code, b := e.upload("", fields, data); code != http.StatusUnauthorized {
			t.Fatalf("anonymous upload: %d %s", code, b)
		}
		code, b := e.upload(e.admin, fields, data)
		if code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, b)
		}
		var r apiBootResource
		decode(t, b, &r)
		f := r.only(t)
		if r.Type != "Uploaded" || r.Name != "noble-web" || r.Architecture != "amd64/generic" || r.Subarches != "generic" ||
			r.Title != "Noble web" || r.BaseImage != "ubuntu/noble" || r.ResourceURI != "/MAAS/api/2.0/boot-resources/"+itoa(r.ID)+"/" {
			t.Fatalf("resource = %s", b)
		}
		if f.Filename != "ddraw" || f.Filetype != "ddraw" || f.SHA256 != sum || f.Size != 100000 || !f.Complete || f.UploadURI != "" {
			t.Fatalf("file = %+v", f)
		}
		var list []map[string]any
		e.must(http.StatusOK, http.MethodGet, "boot-resources/", e.user, nil, &list)
		if len(list) != 1 || list[0]["name"] != "noble-web" || list[0]["type"] != "Uploaded" || list[0]["sets"] != nil {
			t.Fatalf("list = %v", list)
		}
		e.must(http.StatusOK, http.MethodGet, "boot-resources/", e.user, url.Values{"type": {"synced"}}, &list)
		if len(list) != 0 {
			t.Fatalf("synced list = %v", list)
		}
		e.must(http.StatusBadRequest, http.MethodGet, "boot-resources/", e.user, url.Values{"type": {"bogus"}}, nil)
		var shown apiBootResource
		e.must(http.StatusOK, http.MethodGet, "boot-resources/"+itoa(r.ID)+"/", e.user, nil, &shown)
		if shown.only(t) != f {
			t.Fatalf("show = %+v", shown)
		}

		// Downloads, whole and in ranges.
		if code, got := e.download(sum, ""); code != http.StatusOK || !bytes.Equal(got, data) {
			t.Fatalf("download: %d, %d bytes", code, len(got))
		}
		for rng, want := range map[string][]byte{"bytes=10-99": data[10:100], "bytes=-16": data[len(data)-16:], "bytes=99990-": data[99990:]} {
			if code, got := e.download(sum, rng); code != http.StatusPartialContent || !bytes.Equal(got, want) {
				t.Fatalf("range %s: %d, %d bytes", rng, code, len(got))
			}
		}
		if code, _ := e.download(strings.Repeat("0", 64), ""); code != http.StatusNotFound {
			t.Fatalf("unknown image: %d", code)
		}
		if code, _ := e.download("../../secret.key", ""); code != http.StatusNotFound {
			t.Fatalf("path in image name: %d", code)
		}
	})
}

// chunk PUTs one chunk to an upload URI (as MAAS gives it, from /MAAS/).
func (e *env) chunk(uri string, b []byte, ctype string) (int, []byte) {
	e.t.Helper()
	code, body, _ := e.raw(http.MethodPut, strings.TrimPrefix(uri, api.Prefix), e.admin, ctype, bytes.NewReader(b))
	return code, body
}

func (e *env) createChunked(name, sum string, size int) apiBootResource {
	e.t.Helper()
	var r apiBootResource
	e.must(http.StatusCreated, http.MethodPost, "boot-resources/", e.admin, url.Values{"name": {name},
		"architecture": {"amd64/generic"}, "filetype": {"tgz"}, "sha256": {sum}, "size": {itoa(int64(size))}}, &r)
	return r
}

func (e *env) showFile(id int64) apiBootFile {
	e.t.Helper()
	var r apiBootResource
	e.must(http.StatusOK, http.MethodGet, "boot-resources/"+itoa(id)+"/", e.user, nil, &r)
	return r.only(e.t)
}

func TestBootResourceChunkedUpload(t *testing.T) {
	eachImagesDB(t, func(t *testing.T, e *env) {
		data, sum := image(10_000)
		e.must(http.StatusForbidden, http.MethodPost, "boot-resources/", e.user, url.Values{"name": {"ubuntu/noble"},
			"architecture": {"amd64/generic"}, "sha256": {sum}, "size": {"10000"}}, nil)
		r := e.createChunked("ubuntu/noble", sum, len(data))
		f := r.only(t)
		if r.Name != "ubuntu/noble" || f.Filename != "root.tgz" || f.Complete || f.UploadURI == "" || f.Received != 0 {
			t.Fatalf("created = %+v", r)
		}
		if code, b := e.chunk(f.UploadURI, data[:4000], "text/plain"); code != http.StatusUnsupportedMediaType {
			t.Fatalf("wrong content type: %d %s", code, b)
		}
		for i, part := range [][]byte{data[:4000], data[4000:8000]} {
			if code, b := e.chunk(f.UploadURI, part, "application/octet-stream"); code != http.StatusOK {
				t.Fatalf("chunk %d: %d %s", i, code, b)
			}
		}
		if got := e.showFile(r.ID); got.Complete || got.Received != 8000 || got.Progress != 80 {
			t.Fatalf("after two chunks: %+v", got)
		}
		if code, _ := e.download(sum, ""); code != http.StatusNotFound {
			t.Fatalf("incomplete image served: %d", code)
		}
		// A chunk passing the size is refused whole.
		if code, b := e.chunk(f.UploadURI, data[6000:], "application/octet-stream"); code != http.StatusBadRequest || !strings.Contains(string(b), "Too much data") {
			t.Fatalf("chunk beyond size: %d %s", code, b)
		}
		if got := e.showFile(r.ID); got.Received != 8000 {
			t.Fatalf("after a refused chunk: %+v", got)
		}
		if code, b := e.chunk(f.UploadURI, data[8000:], ""); code != http.StatusOK {
			t.Fatalf("last chunk: %d %s", code, b)
		}
		if got := e.showFile(r.ID); !got.Complete || got.UploadURI != "" {
			t.Fatalf("after the last chunk: %+v", got)
		}
		if code, got := e.download(sum, "bytes=10-99"); code != http.StatusPartialContent || !bytes.Equal(got, data[10:100]) {
			t.Fatalf("range download: %d", code)
		}
		if code, b := e.chunk(f.UploadURI, data[:10], ""); code != http.StatusBadRequest || !strings.Contains(string(b), "complete") {
			t.Fatalf("chunk to a complete file: %d %s", code, b)
		}

		// A new upload of the same resource replaces the old set once it
		// completes; until then the old one is still served.
		data2, sum2 := image(5000)
		r2 := e.createChunked("ubuntu/noble", sum2, len(data2))
		if r2.ID != r.ID || len(r2.Sets) != 2 {
			t.Fatalf("second upload = %+v", r2)
		}
		var up string
		for _, s := range r2.Sets {
			for _, f := range s.Files {
				if !f.Complete {
					up = f.UploadURI
				}
			}
		}
		if code, _ := e.download(sum, ""); code != http.StatusOK {
			t.Fatal("the old set went before the new one completed")
		}
		if code, b := e.chunk(up, data2, "application/octet-stream"); code != http.StatusOK {
			t.Fatalf("second upload: %d %s", code, b)
		}
		if got := e.showFile(r.ID); got.SHA256 != sum2 || !got.Complete {
			t.Fatalf("after replacing: %+v", got)
		}
		if code, _ := e.download(sum, ""); code != http.StatusNotFound || strings.Join(e.imageFiles(), ",") != sum2 {
			t.Fatalf("replaced image still there: %d, %v", code, e.imageFiles())
		}
	})
}

func TestBootResourceChecksumMismatch(t *testing.T) {
	eachImagesDB(t, func(t *testing.T, e *env) {
		data, sum := image(3000)
		wrong := strings.Repeat("ab", 32)
		code, b := e.upload(e.admin, url.Values{"name": {"bad"}, "architecture": {"amd64/generic"}, "filetype": {"ddgz"}, "sha256": {wrong}}, data)
		if code != http.StatusBadRequest || !strings.Contains(string(b), "expected "+wrong+", got "+sum) {
			t.Fatalf("wrong sha256: %d %s", code, b)
		}
		code, b = e.upload(e.admin, url.Values{"name": {"bad"}, "architecture": {"amd64/generic"}, "size": {"2999"}}, data)
		if code != http.StatusBadRequest || !strings.Contains(string(b), "expected 2999, got 3000") {
			t.Fatalf("wrong size: %d %s", code, b)
		}
		var list []map[string]any
		e.must(http.StatusOK, http.MethodGet, "boot-resources/", e.admin, nil, &list)
		if len(list) != 0 || len(e.imageFiles()) != 0 {
			t.Fatalf("a refused upload left %v and %v", list, e.imageFiles())
		}

		// Chunked: the last chunk finds the mismatch; the file stays
		// incomplete and empty, ready to be sent again.
		r := e.createChunked("custom/bad", wrong, len(data))
		f := r.only(t)
		e.chunk(f.UploadURI, data[:2000], "")
		code, b = e.chunk(f.UploadURI, data[2000:], "")
		if code != http.StatusBadRequest || !strings.Contains(string(b), "expected "+wrong+", got "+sum) {
			t.Fatalf("chunked mismatch: %d %s", code, b)
		}
		if got := e.showFile(r.ID); got.Complete || got.Received != 0 {
			t.Fatalf("after a mismatch: %+v", got)
		}
		if code, _ := e.download(sum, ""); code != http.StatusNotFound || len(e.imageFiles()) != 0 {
			t.Fatalf("mismatched bytes kept: %d %v", code, e.imageFiles())
		}
	})
}

func TestBootResourceDelete(t *testing.T) {
	eachImagesDB(t, func(t *testing.T, e *env) {
		data, sum := image(2048)
		var a, b apiBootResource
		for _, x := range []struct {
			name string
			r    *apiBootResource
		}{{"one", &a}, {"two", &b}} {
			code, body := e.upload(e.admin, url.Values{"name": {x.name}, "architecture": {"amd64/generic"}, "filetype": {"ddxz"}}, data)
			if code != http.StatusCreated {
				t.Fatalf("upload %s: %d %s", x.name, code, body)
			}
			decode(t, body, x.r)
		}
		// An incomplete upload of the same bytes, too: it completes at once.
		c := e.createChunked("three", sum, len(data))
		if !c.only(t).Complete {
			t.Fatal("an upload of bytes already here is not complete")
		}
		e.must(http.StatusForbidden, http.MethodDelete, "boot-resources/"+itoa(a.ID)+"/", e.user, nil, nil)
		e.must(http.StatusNoContent, http.MethodDelete, "boot-resources/"+itoa(a.ID)+"/", e.admin, nil, nil)
		e.must(http.StatusNotFound, http.MethodGet, "boot-resources/"+itoa(a.ID)+"/", e.admin, nil, nil)
		e.must(http.StatusNotFound, http.MethodDelete, "boot-resources/"+itoa(a.ID)+"/", e.admin, nil, nil)
		e.must(http.StatusNotFound, http.MethodGet, "boot-resources/nope/", e.admin, nil, nil)
		if code, _ := e.download(sum, ""); code != http.StatusOK {
			t.Fatal("bytes another resource names were removed")
		}
		e.must(http.StatusNoContent, http.MethodDelete, "boot-resources/"+itoa(b.ID)+"/", e.admin, nil, nil)
		e.must(http.StatusNoContent, http.MethodDelete, "boot-resources/"+itoa(c.ID)+"/", e.admin, nil, nil)
		if code, _ := e.download(sum, ""); code != http.StatusNotFound || len(e.imageFiles()) != 0 {
			t.Fatalf("deleted image: %d, %v", code, e.imageFiles())
		}
		// Deleting an incomplete upload drops its bytes.
		d := e.createChunked("four", strings.Repeat("c", 64), 100)
		e.chunk(d.only(t).UploadURI, make([]byte, 50), "")
		e.must(http.StatusNoContent, http.MethodDelete, "boot-resources/"+itoa(d.ID)+"/", e.admin, nil, nil)
		if parts, _ := os.ReadDir(filepath.Join(e.dataDir, "images", ".partial")); len(parts) != 0 {
			t.Fatalf("partial upload left: %v", parts)
		}
	})
}

func TestBootResourceRestart(t *testing.T) {
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			dbURL := ""
			if db == "postgres" {
				dbURL = pgtest.URL(t)
			}
			dir := t.TempDir()
			e, stop := startImages(t, dbURL, dir)
			done, doneSum := image(4096)
			if code, b := e.upload(e.admin, url.Values{"name": {"done"}, "architecture": {"arm64/generic"}, "filetype": {"ddraw"}}, done); code != http.StatusCreated {
				t.Fatalf("upload: %d %s", code, b)
			}
			half, halfSum := image(9000)
			r := e.createChunked("half", halfSum, len(half))
			e.chunk(r.only(t).UploadURI, half[:5000], "application/octet-stream")
			stop()

			e, _ = startImages(t, dbURL, dir)
			if code, got := e.download(doneSum, "bytes=100-199"); code != http.StatusPartialContent || !bytes.Equal(got, done[100:200]) {
				t.Fatalf("after restart: %d", code)
			}
			f := e.showFile(r.ID)
			if f.Complete || f.Received != 5000 {
				t.Fatalf("interrupted upload after restart: %+v", f)
			}
			if code, _ := e.download(halfSum, ""); code != http.StatusNotFound {
				t.Fatal("an interrupted upload is served")
			}
			if code, b := e.chunk(f.UploadURI, half[5000:], "application/octet-stream"); code != http.StatusOK {
				t.Fatalf("resume: %d %s", code, b)
			}
			if code, got := e.download(halfSum, ""); code != http.StatusOK || !bytes.Equal(got, half) {
				t.Fatalf("resumed image: %d", code)
			}
		})
	}
}

func TestBootResourceHostileInput(t *testing.T) {
	e, _ := startImages(t, "", t.TempDir())
	_, sum := image(10)
	ok := url.Values{"name": {"fine"}, "architecture": {"amd64/generic"}, "sha256": {sum}, "size": {"10"}}
	with := func(k, v string) url.Values {
		f := url.Values{}
		for kk, vv := range ok {
			f[kk] = vv
		}
		f.Set(k, v)
		return f
	}
	for _, f := range []url.Values{
		with("name", "../etc/passwd"), with("name", "custom/a/b"), with("name", "ubuntu"), with("name", "plan9/x"),
		with("name", strings.Repeat("a", 200)), with("name", ""), with("name", "a\x00b"), with("name", "custom/.."),
		with("architecture", "amd64/../x"), with("architecture", "vax/generic"), with("architecture", ""),
		with("filetype", "exe"), with("sha256", "zz"), with("sha256", ""), with("size", "-1"), with("size", "0"),
		with("size", "9223372036854775807"), with("size", "1e3"), with("title", "a\nb"), with("base_image", "custom/x"),
	} {
		code, b := e.call(http.MethodPost, "boot-resources/", e.admin, f)
		if code/100 != 4 {
			t.Errorf("%v: %d %s", f, code, b)
		}
	}
	if code, b, _ := e.raw(http.MethodPost, "boot-resources/", e.admin, "text/plain", strings.NewReader("x")); code != http.StatusBadRequest {
		t.Errorf("text/plain create: %d %s", code, b)
	}
	if code, b := e.call(http.MethodPost, "boot-resources/?op=import", e.admin, nil); code != http.StatusBadRequest {
		t.Errorf("op=import: %d %s", code, b)
	}
	var list []map[string]any
	e.must(http.StatusOK, http.MethodGet, "boot-resources/", e.admin, nil, &list)
	if len(list) != 0 || len(e.imageFiles()) != 0 {
		t.Fatalf("hostile input stored %v, %v", list, e.imageFiles())
	}
	r := e.createChunked("fine", sum, 10)
	uri := r.only(t).UploadURI
	if code, b := e.chunk(uri, nil, ""); code != http.StatusBadRequest {
		t.Errorf("empty chunk: %d %s", code, b)
	}
	if code, b := e.chunk(strings.Replace(uri, "/upload/", "/upload/9", 1), []byte("x"), ""); code != http.StatusNotFound {
		t.Errorf("unknown file: %d %s", code, b)
	}
	if code, b := e.chunk(uri, make([]byte, 11), ""); code != http.StatusBadRequest {
		t.Errorf("oversized chunk: %d %s", code, b)
	}
}

func decode(t *testing.T, b []byte, out any) {
	t.Helper()
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
