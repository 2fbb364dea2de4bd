package cli_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/cli"
	"github.com/anvilmetal/anvil/internal/client"
)

// rootTarball is a gzip root filesystem tarball of a few files.
func rootTarball(t *testing.T) []byte { return cli.Gzip(cli.Tarball(t)) }

// rawDisk is a raw disk image of n bytes: a boot signature, then a
// pattern, so that bytes out of place change its SHA-256.
func rawDisk(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	b[510], b[511] = 0x55, 0xaa
	return b
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// download fetches an image's bytes as racks do (anonymous images/<sha256>).
func (e *e2e) download(sha string) []byte {
	e.t.Helper()
	resp, err := http.Get(e.url + "/MAAS/api/2.0/images/" + sha)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("GET images/%s: %s %s", sha, resp.Status, b)
	}
	return b
}

// TestE2EImages uploads a root tarball and a disk image of two chunks
// through the CLI to a real server, lists and deletes them; the bytes the
// server then serves are the file's. Wrong files are refused before
// anything is sent, and the server's refusals come through in words.
func TestE2EImages(t *testing.T) {
	eachDB(t, func(t *testing.T, e *e2e) {
		e.login()
		ctx := context.Background()
		tgz := rootTarball(t)
		tgzFile := writeFile(t, "debian-12.tar.gz", tgz)
		img := rawDisk(4<<20 + 4096) // one whole chunk and a bit
		imgFile := writeFile(t, "appliance.img", img)

		// Wrong files and flags: nothing reaches the server.
		e.fails([]string{"images", "upload", writeFile(t, "notes.txt", []byte("#!/bin/sh\necho hi\n")), "--name", "x"},
			"notes.txt: it is neither a root filesystem tarball", "nor a disk image")
		e.fails([]string{"images", "upload", writeFile(t, "qcow.img", append([]byte{'Q', 'F', 'I', 0xfb}, make([]byte, 600)...)), "--name", "x"},
			"qemu-img convert")
		e.fails([]string{"images", "upload", tgzFile, "--name", "x", "--filetype", "ddxz"}, "--filetype ddxz, but the content is tgz")
		e.fails([]string{"images", "upload", tgzFile}, "--name is required")
		e.fails([]string{"images", "upload", tgzFile + ".missing", "--name", "x"}, "no such file")
		e.fails([]string{"images", "upload", t.TempDir(), "--name", "x"}, "not a regular file")
		e.fails([]string{"images", "upload", writeFile(t, "empty.img", nil), "--name", "x"}, "empty")
		// The server's own checks, in its words: nothing half-made is left.
		e.fails([]string{"images", "upload", tgzFile, "--name", "x", "--arch", "sparc"}, "400 Bad Request", "architecture", "not a valid architecture")
		e.fails([]string{"images", "upload", tgzFile, "--name", "ubuntu"}, "reserved name")
		if bs, err := e.srv.Store.ListBootResources(ctx); err != nil || len(bs) != 0 {
			t.Fatalf("after refused uploads: %+v %v", bs, err)
		}

		out := e.ok("images", "upload", tgzFile, "--name", "debian-12", "--title", "Debian 12")
		m := regexp.MustCompile(`^Image (\d+): debian-12 amd64/generic, tgz, \d+ B, uploaded\.\n$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("upload of the tarball printed %q", out)
		}
		tgzID := m[1]
		// Not on a terminal: no progress line (ok checked stderr is empty).
		out = e.ok("images", "upload", imgFile, "--name", "appliance", "--arch", "arm64", "--filetype", "ddraw", "--json")
		var res struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
			Sets map[string]struct {
				Complete bool `json:"complete"`
				Files    map[string]struct {
					SHA256   string `json:"sha256"`
					Size     int64  `json:"size"`
					Filetype string `json:"filetype"`
				} `json:"files"`
			} `json:"sets"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.Name != "appliance" || len(res.Sets) != 1 {
			t.Fatalf("upload --json: %v\n%s", err, out)
		}
		for _, set := range res.Sets {
			f := set.Files["ddraw"]
			if !set.Complete || f.SHA256 != sum(img) || f.Size != int64(len(img)) || f.Filetype != "ddraw" {
				t.Errorf("uploaded disk image: %+v", set)
			}
		}
		if got := e.download(sum(img)); !bytes.Equal(got, img) {
			t.Errorf("the server serves %d bytes (sha256 %s), not the %d uploaded", len(got), sum(got), len(img))
		}
		if got := e.download(sum(tgz)); !bytes.Equal(got, tgz) {
			t.Errorf("the server serves %d bytes of the tarball, not its %d", len(got), len(tgz))
		}

		// On a terminal, a progress line: checking, then uploading, each
		// ending at 100% and finished with a newline.
		restore := cli.SetTerminal(true)
		img2 := rawDisk(64 << 10)
		img2[600] = 1
		stdout, stderr, code := e.run("images", "upload", writeFile(t, "small.img", img2), "--name", "small")
		restore()
		if code != 0 || !strings.HasPrefix(stdout, "Image ") ||
			!strings.Contains(stderr, "\r\x1b[KChecking small.img: 100% (64.0 KiB of 64.0 KiB") ||
			!strings.Contains(stderr, "\r\x1b[KUploading small.img: 100% (64.0 KiB of 64.0 KiB") || !strings.HasSuffix(stderr, ")\n") {
			t.Errorf("upload on a terminal: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
		}

		// An upload that stopped after its first chunk is taken up where
		// it stopped: no second file, the rest of the bytes only.
		part := rawDisk(4<<20 + 8192)
		part[700] = 2
		c, err := client.New(e.url, e.key)
		if err != nil {
			t.Fatal(err)
		}
		started, err := c.CreateBootResource(ctx, url.Values{"name": {"part"}, "architecture": {"amd64"}, "filetype": {"ddraw"},
			"sha256": {sum(part)}, "size": {strconv.Itoa(len(part))}})
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range started.Sets {
			if _, err := c.UploadChunk(ctx, set.Files["ddraw"].UploadURI, part[:4<<20]); err != nil {
				t.Fatal(err)
			}
		}
		out = e.ok("images", "upload", writeFile(t, "part.img", part), "--name", "part")
		if want := fmt.Sprintf("Image %d: part amd64/generic, ddraw, 4.0 MiB, uploaded (resumed after 4.0 MiB).\n", started.ID); out != want {
			t.Errorf("resumed upload printed %q, want %q", out, want)
		}
		if b, err := e.srv.Store.GetBootResource(ctx, started.ID); err != nil || len(b.Files) != 1 || !b.Files[0].Complete {
			t.Errorf("resumed image: %+v %v", b, err)
		}
		if got := e.download(sum(part)); !bytes.Equal(got, part) {
			t.Errorf("the resumed upload serves %d bytes (sha256 %s), not the %d uploaded", len(got), sum(got), len(part))
		}
		e.ok("images", "delete", "part")

		out = e.ok("images", "list")
		if !strings.HasPrefix(out, "ID ") || lineWith(out, tgzID, "debian-12", "amd64/generic", "tgz", "ready", "Debian 12") == "" ||
			lineWith(out, "appliance", "arm64/generic", "ddraw", "4.0 MiB", "ready") == "" || lineWith(out, "small", "64.0 KiB") == "" {
			t.Errorf("images list:\n%s", out)
		}
		var listed []map[string]any
		if err := json.Unmarshal([]byte(e.ok("images", "list", "--json")), &listed); err != nil || len(listed) != 3 {
			t.Errorf("images list --json: %v %v", listed, err)
		}

		if out := e.ok("images", "delete", "appliance"); !regexp.MustCompile(`^Deleted image \d+ \(appliance arm64/generic\)\.\n$`).MatchString(out) {
			t.Errorf("images delete printed %q", out)
		}
		if out := e.ok("images", "delete", tgzID); out != "Deleted image "+tgzID+" (debian-12 amd64/generic).\n" {
			t.Errorf("images delete by id printed %q", out)
		}
		e.fails([]string{"images", "delete", "appliance"}, `no image "appliance"`)
		if bs, err := e.srv.Store.ListBootResources(ctx); err != nil || len(bs) != 1 || bs[0].Name != "small" {
			t.Errorf("after deletes: %+v %v", bs, err)
		}
	})
}
