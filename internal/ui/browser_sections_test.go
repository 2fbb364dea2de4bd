package ui_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/testutil/browser"
)

// TestMachineSectionsInBrowser drives the network, storage, DNS and
// script result pages in Chromium: a bond of the machine's two NICs (first
// refused without parents, the API's words by the field), the lvm layout
// applied after the page asks, a DNS record added and looked up, and a
// script result opened from the machine page.
func TestMachineSectionsInBrowser(t *testing.T) {
	s := start(t)
	_, _, id := s.asAda("web-9", 9)
	zero := 0
	rid := s.scriptResult(id, scripts.Commissioning, store.ScriptResult{Name: "00-maas-01-lshw", HardwareType: scripts.Node,
		Status: scripts.Passed, ExitStatus: &zero, Output: []byte("<list><node id=\"web-9\" class=\"system\"/></list>\n")}, 2*time.Second)

	b := browser.New(t, browser.AllowConsoleErrors("status of 400 (Bad Request)"))
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	b.Navigate(t, s.base+"/MAAS/machine/"+id)
	b.WaitText(t, "h1", "Log in", 15*time.Second)
	b.Run(t, chromedp.SendKeys(css("#username"), "ada"), chromedp.SendKeys(css("#password"), adaPass), chromedp.Click(css("#login")))
	b.WaitText(t, "h1", "web-9", 15*time.Second)

	// A bond: without parents the API's refusal shows by the field.
	b.Run(t, chromedp.Click(css("#net-edit summary")), chromedp.SendKeys(css(`#create-bond input[name="name"]`), "bond0"),
		chromedp.SetValue(css(`#create-bond select[name="bond_mode"]`), "active-backup"), chromedp.Click(css("#create-bond button")))
	b.WaitText(t, `#create-bond [data-error-for="parents"]`, "A bond interface must have one or more parents.", 15*time.Second)
	if n := browser.Get(t, b, chromedp.Evaluate[int](`(() => { const cs = document.querySelectorAll('#create-bond input[name="parents"]'); cs.forEach(c => c.checked = true); return cs.length; })()`)); n != 2 {
		t.Fatalf("the bond form offers %d parents, want the 2 NICs", n)
	}
	b.Click(t, "#create-bond button")
	b.WaitText(t, "#iface-bond0", "bond (active-backup)", 15*time.Second)
	b.WaitText(t, "#iface-bond0", "eth", 5*time.Second)
	b.Screenshot(t, "machine-network")

	// The lvm layout, after the page asks.
	b.Run(t, chromedp.Click(css("#storage-edit summary")), chromedp.SetValue(css(`#apply-layout select[name="storage_layout"]`), "lvm"),
		chromedp.Click(css("#apply-layout button")))
	b.Click(t, "#confirm-yes")
	b.WaitText(t, "#storage-layout", "lvm", 15*time.Second)
	b.WaitText(t, "#storage-vgs", "vgroot", 5*time.Second)
	b.WaitText(t, "#storage-devices", "ext4 at /", 5*time.Second)
	// A custom edit on the second disk: a partition, formatted, mounted.
	b.Run(t, chromedp.Click(css("#storage-edit summary")), chromedp.SetValue(css(`#add-partition select[data-path="disk"]`), optionValue(t, b, "#add-partition select", "sdb")),
		chromedp.SendKeys(css(`#add-partition input[name="size"]`), "5G"), chromedp.Click(css("#add-partition button")))
	b.WaitText(t, "#storage-devices", "sdb-part1", 15*time.Second)
	b.Run(t, chromedp.Click(css("#storage-edit summary")), chromedp.SetValue(css("#format-device select[data-path]"), optionValue(t, b, "#format-device select[data-path]", "sdb-part1")),
		chromedp.SetValue(css(`#format-device select[name="fstype"]`), "xfs"), chromedp.Click(css("#format-device button")))
	b.WaitText(t, "#storage-devices", "xfs, not mounted", 15*time.Second)
	// A mount point that is no absolute path is refused in the API's words.
	b.Run(t, chromedp.Click(css("#storage-edit summary")), chromedp.SetValue(css("#mount-device select[data-path]"), optionValue(t, b, "#mount-device select[data-path]", "sdb-part1")),
		chromedp.SendKeys(css(`#mount-device input[name="mount_point"]`), "srv"), chromedp.Click(css("#mount-device button")))
	b.WaitText(t, "#mount-device .field-error", "srv", 15*time.Second)
	b.Run(t, chromedp.SetValue(css(`#mount-device input[name="mount_point"]`), "/srv"), chromedp.Click(css("#mount-device button")))
	b.WaitText(t, "#storage-devices", "xfs at /srv", 15*time.Second)
	b.Screenshot(t, "machine-storage")

	// A script result, opened from the machine page.
	b.Click(t, fmt.Sprintf("#result-%d", rid))
	b.WaitText(t, "#result-output", `<node id="web-9" class="system"/>`, 15*time.Second)
	b.WaitText(t, "#result-status", "Passed", 5*time.Second)
	b.WaitText(t, "#result-runtime", "2s", 5*time.Second)

	// A DNS record: a bad address is refused by its field, a good one is
	// listed and answers the lookup box.
	b.Navigate(t, s.base+"/MAAS/dns")
	b.Run(t, chromedp.SendKeys(css(`#add-address input[name="name"]`), "www"),
		chromedp.SendKeys(css(`#add-address input[name="ip_addresses"]`), "192.0.2.300"), chromedp.Click(css("#add-address button")))
	b.WaitText(t, "#add-address", "192.0.2.300", 15*time.Second)
	b.Run(t, chromedp.SetValue(css(`#add-address input[name="ip_addresses"]`), "192.0.2.77"), chromedp.Click(css("#add-address button")))
	b.WaitText(t, "#dns-added", "192.0.2.77", 15*time.Second)
	// And a record of another type on the same name.
	b.Run(t, chromedp.SendKeys(css(`#add-record input[name="name"]`), "www"), chromedp.SetValue(css(`#add-record select[name="rrtype"]`), "TXT"),
		chromedp.SendKeys(css(`#add-record input[name="rrdata"]`), "web front"), chromedp.Click(css("#add-record button")))
	b.WaitText(t, "#dns-added", "web front", 15*time.Second)
	b.WaitText(t, "#dns-records", "www.maas.", 5*time.Second)
	b.Run(t, chromedp.SendKeys(css(`#dns-lookup input[name="q"]`), "www.maas"), chromedp.SetValue(css(`#dns-lookup select[name="type"]`), "A"),
		chromedp.Click(css("#dns-lookup button")))
	b.WaitText(t, "#dns-answer", "NOERROR", 15*time.Second)
	b.WaitText(t, "#dns-answer", "192.0.2.77", 5*time.Second)
	b.Screenshot(t, "dns")
}

// optionValue is the value of the option of the select at sel whose text
// is text.
func optionValue(t *testing.T, b *browser.Browser, sel, text string) string {
	t.Helper()
	v := browser.Get(t, b, chromedp.Evaluate[string](fmt.Sprintf(`[...document.querySelector(%q).options].find(o => o.text === %q)?.value ?? ""`, sel, text)))
	if v == "" {
		t.Fatalf("%s offers no %s", sel, text)
	}
	return v
}
