package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/store"
)

// TestBootSources reads boot-sources/ as the maas CLI does: the one local
// source with MAAS's fields, and a selection per uploaded OS and release
// with its architectures.
func TestBootSources(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		for i, img := range []struct{ name, arch string }{{"ubuntu/noble", "amd64/generic"}, {"ubuntu/noble", "arm64/generic"}, {"web", "amd64/generic"}} {
			_, err := e.srv.Store.CreateBootResource(ctx, store.BootResource{Name: img.name, Architecture: img.arch},
				store.BootResourceFile{Version: "20260101", Label: "uploaded", Filename: "root.tgz", Filetype: "tgz",
					SHA256: strings.Repeat(string(rune('a'+i)), 64), Size: 10})
			if err != nil {
				t.Fatal(err)
			}
		}
		var srcs []map[string]any
		if err := json.Unmarshal(e.mustCLI(200, "GET", "boot-sources/", e.admin, nil).body, &srcs); err != nil || len(srcs) != 1 {
			t.Fatalf("boot-sources/: %v %v", srcs, err)
		}
		for _, f := range []string{"id", "name", "url", "priority", "enabled", "keyring_filename", "keyring_data", "skip_keyring_verification", "created", "updated"} {
			if _, ok := srcs[0][f]; !ok {
				t.Errorf("boot source lacks MAAS's %s", f)
			}
		}
		if srcs[0]["id"] != 1.0 || !strings.HasSuffix(srcs[0]["url"].(string), "/MAAS/api/2.0/boot-resources/") {
			t.Fatalf("local source: %v", srcs[0])
		}
		var one map[string]any
		if err := json.Unmarshal(e.mustCLI(200, "GET", "boot-sources/1/", e.admin, nil).body, &one); err != nil || one["url"] != srcs[0]["url"] {
			t.Fatalf("boot-sources/1/: %v %v", one, err)
		}
		var sels []struct {
			BootSourceID int      `json:"boot_source_id"`
			OS           string   `json:"os"`
			Release      string   `json:"release"`
			Arches       []string `json:"arches"`
			Subarches    []string `json:"subarches"`
			Labels       []string `json:"labels"`
		}
		a := e.mustCLI(200, "GET", "boot-sources/1/selections/", e.admin, nil)
		if err := json.Unmarshal(a.body, &sels); err != nil || len(sels) != 2 {
			t.Fatalf("selections: %s %v", a.body, err)
		}
		if sels[0].OS != "ubuntu" || sels[0].Release != "noble" || sels[1].Release != "web" || strings.Join(sels[0].Arches, ",") != "amd64,arm64" || sels[1].OS != "custom" ||
			sels[0].BootSourceID != 1 || sels[1].Subarches[0] != "*" || sels[1].Labels[0] != "*" {
			t.Fatalf("selections: %s", a.body)
		}
		var sel map[string]any
		if err := json.Unmarshal(e.mustCLI(200, "GET", "boot-sources/1/selections/1/", e.admin, nil).body, &sel); err != nil || sel["release"] != "noble" {
			t.Fatalf("selection 1: %v %v", sel, err)
		}
		if a := e.cli("GET", "boot-sources/1/selections/2/", e.admin, nil); a.code != 404 || string(a.body) != "No BootSourceSelection matches the given query." {
			t.Fatalf("no such selection: %d %q", a.code, a.body)
		}
		// Administrators only, as MAAS's boot entities.
		if a := e.cli("GET", "boot-sources/", e.user, nil); a.code != 403 {
			t.Fatalf("boot-sources/ for a user: %d", a.code)
		}
	})
}
