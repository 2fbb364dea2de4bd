package ui_test

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/serve"
)

// TestSiteGapsOfLocalRack reads the machine list of a site whose rack runs
// in the same process: it names the missing loaders and environment with
// the commands that add them to this data directory, until they are there.
func TestSiteGapsOfLocalRack(t *testing.T) {
	s := startWith(t, "", func(c *serve.Config) { c.BootHTTPAddr = "127.0.0.1:0" })
	c := newClient(t)
	s.login(c, "ada", adaPass)
	_, _, page := s.do(c, "GET", "/MAAS/machines", nil, nil)
	for _, want := range []string{"No boot loaders (lpxelinux.0, ldlinux.c32, bootx64.efi, grubx64.efi)",
		"anvil import-loaders --data " + s.data, "No ephemeral environment", "-out " + filepath.Join(s.data, "boot", "ephemeral")} {
		if !strings.Contains(html.UnescapeString(page), want) {
			t.Fatalf("the machine list of an empty site does not say %q", want)
		}
	}
	for _, f := range []string{"lpxelinux.0", "ldlinux.c32", "bootx64.efi", "grubx64.efi", "ephemeral/vmlinuz", "ephemeral/initrd.img"} {
		p := filepath.Join(s.data, "boot", f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, _, page = s.do(c, "GET", "/MAAS/machines", nil, nil)
	if strings.Contains(page, "No boot loaders") || strings.Contains(page, "No ephemeral environment") || !strings.Contains(page, "No images") {
		t.Fatal("the machine list does not follow the boot directory")
	}
}
