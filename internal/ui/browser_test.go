package ui_test

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/anvilmetal/anvil/internal/testutil/browser"
)

// TestPagesInBrowser drives every page in headless Chromium against a
// server on loopback (no machines boot here; internal/e2e's TestWebUI
// does that): login, the settings forms through the API with their errors
// shown by the field, a machine added by MAC, its page, the statistics
// plots. Any JavaScript error fails it.
func TestPagesInBrowser(t *testing.T) {
	s := start(t)
	// The API's refusals (400) are part of the test; Chromium logs each as
	// a failed load.
	b := browser.New(t, browser.AllowConsoleErrors("status of 400 (Bad Request)"))
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	b.Navigate(t, s.base+"/MAAS/settings")
	b.WaitText(t, "h1", "Log in", 15*time.Second)
	b.Run(t, chromedp.SendKeys(css("#username"), "ada"), chromedp.SendKeys(css("#password"), adaPass), chromedp.Click(css("#login")))
	b.WaitText(t, "h1", "Settings", 15*time.Second)

	// Poll interval: a refusal in words by the field, then a good value.
	b.Run(t, chromedp.SetValue(css(`#poll-interval input[name="value"]`), "3"), chromedp.Click(css("#poll-interval button")))
	b.WaitText(t, `#poll-interval [data-error-for="power_poll_interval"]`, "outside 10s to 24h0m0s", 15*time.Second)
	b.Run(t, chromedp.SetValue(css(`#poll-interval input[name="value"]`), "90"), chromedp.Click(css("#poll-interval button")))
	b.WaitText(t, "#poll-interval [data-saved]", "Saved.", 15*time.Second)
	s.waitConfig(t, "90")
	// Drift policy of the default pool.
	b.Run(t, chromedp.SetValue(css(`#pool-default select`), "warn"), chromedp.Click(css("#pool-default button")))
	b.WaitText(t, "#pool-default [data-saved]", "Saved.", 15*time.Second)
	b.Navigate(t, s.base+"/MAAS/settings")
	if v := browser.Get(t, b, chromedp.Evaluate[string](`document.querySelector("#pool-default select").value`)); v != "warn" {
		t.Fatalf("the default pool's policy shows %q after saving warn", v)
	}
	// A subnet: a bad CIDR is refused by its field, a good one is listed.
	b.Run(t, chromedp.SendKeys(css(`#add-subnet input[name="cidr"]`), "192.0.2.0/33"), chromedp.Click(css("#add-subnet button")))
	b.WaitText(t, `#add-subnet [data-error-for="cidr"]`, "192.0.2.0/33", 15*time.Second)
	b.Run(t, chromedp.SetValue(css(`#add-subnet input[name="cidr"]`), "192.0.2.0/24"), chromedp.Click(css("#add-subnet button")))
	b.WaitText(t, "#subnets", "192.0.2.0/24", 15*time.Second)
	// Its dynamic range: one outside the subnet is refused in words.
	b.Run(t, chromedp.SendKeys(css(`#add-range input[name="start_ip"]`), "198.51.100.10"),
		chromedp.SendKeys(css(`#add-range input[name="end_ip"]`), "198.51.100.20"), chromedp.Click(css("#add-range button")))
	b.WaitText(t, `#add-range [data-error-for="start_ip"]`, "IP addresses must be within subnet: 192.0.2.0/24.", 15*time.Second)
	b.Run(t, chromedp.SetValue(css(`#add-range input[name="start_ip"]`), "192.0.2.100"),
		chromedp.SetValue(css(`#add-range input[name="end_ip"]`), "192.0.2.200"), chromedp.Click(css("#add-range button")))
	b.WaitText(t, "#subnets", "dynamic 192.0.2.100–192.0.2.200", 15*time.Second)
	// An image uploaded from the page, then offered for deploys.
	img := filepath.Join(t.TempDir(), "disk.raw")
	if err := os.WriteFile(img, bytes.Repeat([]byte("anvil-image "), 100000), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Run(t, chromedp.SendKeys(css(`#upload-image input[name="name"]`), "custom/web-2026"),
		chromedp.SendKeys(css(`#upload-image input[name="content"]`), img), chromedp.Click(css("#upload-image button")))
	b.WaitText(t, "#images", "web-2026", 30*time.Second)
	b.WaitText(t, "#images", "ready", 5*time.Second)
	b.Screenshot(t, "settings")

	// Add by MAC: a malformed MAC is refused by its field, then added.
	b.Navigate(t, s.base+"/MAAS/machines/add")
	b.Run(t, chromedp.SetValue(css("#power_type"), "manual"), chromedp.SendKeys(css("#mac_addresses"), "52:54:00:zz:00:01"),
		chromedp.Click(css("#add-submit")))
	b.WaitText(t, `[data-error-for="mac_addresses"]`, "52:54:00:zz:00:01", 15*time.Second)
	b.Run(t, chromedp.SetValue(css("#mac_addresses"), "52:54:00:aa:00:01, 52:54:00:aa:00:02"), chromedp.SendKeys(css("#hostname"), "web-7"),
		chromedp.Click(css("#add-submit")))
	b.WaitText(t, "h1", "web-7", 15*time.Second)
	b.WaitText(t, "#interfaces", "52:54:00:aa:00:02", 15*time.Second)
	b.WaitText(t, "#timeline", "Created", 15*time.Second)
	if v := browser.Get(t, b, chromedp.Evaluate[string](`document.querySelector(".deploy-image").value`)); v != "web-2026" {
		t.Fatalf("the deploy image offered is %q", v)
	}
	b.Screenshot(t, "machine-new")
	// Edit it: a bad hostname is refused by its field; then its BMC is set
	// (loopback, port 9: nothing answers, and nothing leaves the host).
	b.Run(t, chromedp.Click(css("#edit summary")), chromedp.SetValue(css(`#edit-machine input[name="hostname"]`), "bad name!"),
		chromedp.Click(css("#edit-submit")))
	b.WaitText(t, `#edit-machine [data-error-for="hostname"]`, "bad name!", 15*time.Second)
	b.Run(t, chromedp.SetValue(css(`#edit-machine input[name="hostname"]`), "web-8"), chromedp.SetValue(css("#edit-power-type"), "ipmi"),
		chromedp.SetValue(css("#edit-power-address"), "127.0.0.1:9"), chromedp.SetValue(css("#edit-power-user"), "admin"),
		chromedp.SetValue(css("#edit-power-pass"), "Bmc-secret-9"), chromedp.Click(css("#edit-submit")))
	b.WaitText(t, "h1", "web-8", 15*time.Second)
	b.WaitText(t, "#machine-bmc", "IPMI at 127.0.0.1, port 9", 15*time.Second)
	if html := browser.Get(t, b, chromedp.Evaluate[string](`document.documentElement.outerHTML`)); strings.Contains(html, "Bmc-secret-9") {
		t.Fatal("the page shows the BMC password")
	}
	// Mark it broken from its page; the page follows.
	b.Click(t, "#act-mark_broken")
	b.WaitText(t, "#action-result", "mark_broken: asked", 15*time.Second)
	b.WaitText(t, "#machine-status", "Broken", 15*time.Second)

	b.Navigate(t, s.base+"/MAAS/machines")
	b.WaitText(t, "#machines", "web-8", 15*time.Second)
	b.Screenshot(t, "machines")
	b.Navigate(t, s.base+"/MAAS/stats")
	b.WaitText(t, "#plot-status", "Machines by status", 15*time.Second)
	b.Screenshot(t, "stats")
}

func (s *site) waitConfig(t *testing.T, want string) {
	t.Helper()
	c := newClient(t)
	s.login(c, "ada", adaPass)
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, _, body := s.do(c, "GET", "/MAAS/api/2.0/maas/?"+url.Values{"op": {"get_config"}, "name": {"power_poll_interval"}}.Encode(), nil, nil)
		if code == http.StatusOK && strings.TrimSpace(body) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("poll interval %d %s; want %s", code, body, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
