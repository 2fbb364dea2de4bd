package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/anvilmetal/anvil/internal/lab/simboot"
	"github.com/anvilmetal/anvil/internal/testutil/browser"
	"github.com/anvilmetal/anvil/internal/testutil/netns"
)

// TestWebUI drives the web pages in Debian's Chromium, headless, inside
// the site's namespace, against `anvil serve` with a real rack:
//  1. log in (a wrong password is refused in words);
//  2. the machine list shows a simulated fleet appearing live as it
//     enlists, without the page being reloaded;
//  3. a bulk action marks machines of a filtered list broken;
//  4. a QEMU machine is added by its BMC alone from the add page (an API
//     field error shows next to its field first) and its page goes to
//     READY by itself;
//  5. it is powered on and off from its page: the power state, the power
//     queue and the timeline follow;
//  6. the poll interval is changed on the settings page (read back through
//     the API), and the statistics page draws its plots.
//
// Each page's screenshot is saved (ANVIL_SCREENSHOTS names a directory to
// keep them), and any JavaScript error on any page fails the test.
func TestWebUI(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil && os.Getenv("ANVIL_REQUIRE_BROWSER") == "" {
		t.Skip("chromium is not installed (scripts/test.sh installs it)")
	}
	t.Parallel() // its machines and browser are in a namespace of their own
	s := newSite(t, []string{"tapW0", "tapW1"}, nil)
	bin := anvilBinary(t)
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("Ui-secret-pass-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "passwd", "--data", s.data, "--username", "admin", "--password-file", pw).CombinedOutput(); err != nil {
		t.Fatalf("anvil passwd: %v\n%s", err, out)
	}
	// The refused login (401) and the API's refusal of a field (400) are
	// part of the test; Chromium logs each as a failed load.
	b := browser.New(t, browser.InNetNS(s.ns.Name),
		browser.AllowConsoleErrors("status of 401 (Unauthorized)", "status of 400 (Bad Request)"))
	base := "http://" + regionIP + ":5240/MAAS/"
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	// 1. Log in.
	b.Navigate(t, base+"machines")
	b.WaitText(t, "h1", "Log in", 15*time.Second)
	b.Run(t, chromedp.SendKeys(css("#username"), "admin"), chromedp.SendKeys(css("#password"), "not-the-password"),
		chromedp.Click(css("#login")))
	b.WaitText(t, "#login-error", "Wrong user name or password", 15*time.Second)
	b.Screenshot(t, "login-refused")
	b.Run(t, chromedp.SendKeys(css("#password"), "Ui-secret-pass-1"), chromedp.Click(css("#login")))
	b.WaitText(t, "h1", "Machines", 15*time.Second)
	if u := b.URL(); !strings.HasSuffix(u, "/MAAS/machines") {
		t.Fatalf("after logging in the browser is at %s, not the page it asked for", u)
	}

	// 2. A simulated fleet enlists while the list is open.
	b.Run(t, chromedp.Evaluate[chromedp.Void](`window.anvilNotReloaded = true`))
	const fleet = 12
	simFleet(t, s, fleet)
	b.WaitText(t, "#matched", fmt.Sprint(fleet), 2*time.Minute)
	b.Screenshot(t, "machines-live")
	if !browser.Get(t, b, chromedp.Evaluate[bool](`window.anvilNotReloaded === true`)) {
		t.Fatal("the machine list was reloaded rather than updated in place")
	}
	if n := browser.Get(t, b, chromedp.Evaluate[int](`document.querySelectorAll("#machines tbody tr[data-id]").length`)); n != fleet {
		t.Fatalf("the list shows %d rows for %d machines", n, fleet)
	}

	// 3. Bulk action on a filtered, paged list: three NEW machines broken.
	b.Navigate(t, base+"machines?status=new&per_page=3")
	b.WaitText(t, "#list-summary", fmt.Sprintf("of %d machines", fleet), 15*time.Second)
	b.WaitText(t, "#matched", fmt.Sprint(fleet), 15*time.Second)
	b.Run(t, chromedp.Click(css("[data-select-all]")), chromedp.SetValue(css("#bulk-op"), "mark_broken"),
		chromedp.Click(css("#bulk-go")))
	b.WaitText(t, "#bulk-result", "mark_broken: 3 done", 30*time.Second)
	b.WaitText(t, "#matched", fmt.Sprint(fleet-3), 30*time.Second)
	var broken []apiMachine
	s.api("GET", "machines/", url.Values{"status": {"broken"}}, &broken)
	if len(broken) != 3 {
		t.Fatalf("%d machines broken after the bulk action on 3", len(broken))
	}

	// 4. Add a machine by its BMC alone.
	vm := s.machineAt("vmW", "192.0.2.31", "02:00:00:00:00:31", "6f2c1f1e-0000-4000-8000-0000000000f1",
		[]string{"52:54:00:0e:00:f1", "52:54:00:0e:00:f2"}, []string{"tapW0", "tapW1"}, 64)
	b.Navigate(t, base+"machines/add")
	b.WaitText(t, "h1", "Add machine", 15*time.Second)
	// Manual power and no MAC: the API refuses, and says why next to the field.
	b.Run(t, chromedp.SetValue(css("#power_type"), "manual"), chromedp.Click(css("#add-submit")))
	b.WaitText(t, `[data-error-for="mac_addresses"]`, "at least one MAC address is required", 15*time.Second)
	b.Screenshot(t, "add-field-error")
	p := vm.Params()
	b.Run(t,
		chromedp.SendKeys(css("#hostname"), "rack-w-u07"),
		chromedp.SetValue(css("#power_type"), "ipmi"),
		chromedp.SendKeys(css("#power_address"), p["power_address"]),
		chromedp.SendKeys(css("#power_user"), p["power_user"]),
		chromedp.SendKeys(css("#power_pass"), p["power_pass"]),
		chromedp.Click(css("#add-submit")))
	b.WaitText(t, "h1", "rack-w-u07", 30*time.Second)
	b.WaitText(t, "#machine-status", "Ready", 5*time.Minute)
	b.WaitText(t, "#interfaces", "52:54:00:0e:00:f1", 30*time.Second)
	b.Screenshot(t, "machine-ready")

	// 5. Power it on and off from its page.
	b.WaitText(t, "#machine-power", "off", 2*time.Minute)
	b.Click(t, "#act-power_on")
	b.WaitText(t, "#action-result", "power_on: asked", 30*time.Second)
	b.WaitText(t, "#machine-power", "on", time.Minute)
	b.WaitText(t, "#timeline", "Powering on", 15*time.Second)
	b.Click(t, "#act-power_off")
	b.WaitText(t, ".confirm", "power off 1 machine(s)?", 10*time.Second)
	b.Click(t, "#confirm-yes")
	b.WaitText(t, "#action-result", "power_off: asked", 30*time.Second)
	b.WaitText(t, "#power-queue", "Power queue", 5*time.Second)
	b.WaitText(t, "#machine-power", "off", time.Minute)
	b.WaitText(t, "#timeline", "Powering off", 15*time.Second)
	// The queue ran the command and said how it went.
	b.WaitText(t, "#timeline", "Power off done", 30*time.Second)
	b.Screenshot(t, "machine-powered-off")
	if vm.Running() {
		t.Fatal("the QEMU machine still runs after power off from the page")
	}

	// 6. Settings and statistics.
	b.Navigate(t, base+"settings")
	b.WaitText(t, "h1", "Settings", 15*time.Second)
	b.Run(t, chromedp.SetValue(css(`#poll-interval input[name="value"]`), "45"), chromedp.Click(css(`#poll-interval button`)))
	b.WaitText(t, "#poll-interval [data-saved]", "Saved.", 15*time.Second)
	s.waitFor("the poll interval set from the page", 30*time.Second, func() bool {
		got, err := s.cl.Do(context.Background(), "GET", "maas/", url.Values{"op": {"get_config"}, "name": {"power_poll_interval"}}, nil)
		return err == nil && strings.TrimSpace(string(got)) == "45"
	})
	b.Screenshot(t, "settings")
	b.Navigate(t, base+"stats")
	b.WaitText(t, "#plot-status", "Machines by status", 15*time.Second)
	if n := browser.Get(t, b, chromedp.Evaluate[int](`document.querySelectorAll(".plots svg").length`)); n != 3 {
		t.Fatalf("the statistics page draws %d plots, want 3", n)
	}
	b.Screenshot(t, "stats")

	// Logging out ends the session: the list sends the browser to log in.
	b.Navigate(t, base+"machines")
	b.Click(t, "form.logout button")
	b.WaitText(t, "h1", "Log in", 15*time.Second)
	b.Navigate(t, base+"machines")
	b.WaitText(t, "h1", "Log in", 15*time.Second)
}

// simFleet boots n simulated machines (simboot: real DHCP, iPXE config,
// kernel and initrd over HTTP, then the agent's calls) from a second
// namespace wired to the site's bridge. They enlist and power off.
func simFleet(t *testing.T, s *site, n int) {
	t.Helper()
	cli := netns.New(t, s.ns.Name+"c")
	port := "vsim" + fmt.Sprint(os.Getpid()%10000)
	s.ns.Ip("link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", cli.Name)
	s.ns.Ip("link", "set", port, "master", "br0")
	s.ns.Ip("link", "set", port, "up")
	cli.Ip("addr", "add", "192.0.2.250/24", "dev", "eth0")
	cli.Ip("link", "set", "eth0", "up")
	cli.Ip("link", "set", "lo", "up")
	nw, err := simboot.OpenNet(cli.Name, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		nw.Close()
	})
	cfg := simboot.Config{Net: nw, RackHTTP: "http://" + regionIP + ":5248"}
	for i := range n {
		m := &simboot.Machine{MACs: []string{simboot.NewMAC(0x5100 + i)}, UUID: simboot.NewUUID()}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Staggered, as a row of servers powered on by hand would be,
			// so the list visibly fills.
			select {
			case <-time.After(time.Duration(i) * 300 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			if r := m.Boot(ctx, cfg); r.Err != nil && ctx.Err() == nil {
				t.Errorf("simulated machine %s: %s: %v", r.MAC, r.FailedStage, r.Err)
			}
		}()
	}
}
