package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/testutil/browser"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// eachDB runs fn on a site on SQLite and, when one is available, on
// PostgreSQL.
func eachDB(t *testing.T, fn func(t *testing.T, s *site), opt func(*serve.Config)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, startWith(t, "", opt)) })
	t.Run("postgres", func(t *testing.T) { fn(t, startWith(t, pgtest.URL(t), opt)) })
}

// apiKey is ada's API key, as a rack or a script would hold it.
func (s *site) apiKey(t *testing.T) string {
	k, err := serve.APIKey(t.Context(), s.data, s.db, "ada")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// api calls the MAAS API with an OAuth key; it fails the test unless the
// answer is a 200.
func (s *site) api(t *testing.T, key, method, path string, form url.Values) []byte {
	t.Helper()
	p := strings.SplitN(key, ":", 3)
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, s.base+"/MAAS/api/2.0/"+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Authorization", `OAuth oauth_version="1.0", oauth_signature_method="PLAINTEXT", oauth_consumer_key="`+p[0]+
		`", oauth_token="`+p[1]+`", oauth_signature="&`+p[2]+`", oauth_nonce="n", oauth_timestamp="1"`)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	return b
}

// bootEvents reports boot events as a rack does.
func (s *site) bootEvents(t *testing.T, key string, evs ...rack.BootEvent) {
	t.Helper()
	b, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	s.api(t, key, http.MethodPost, "rack/", url.Values{"op": {"boot_events"}, "events": {string(b)}})
}

// addMachine adds a machine as an administrator would, without
// commissioning it.
func (s *site) addMachine(t *testing.T, host, mac, powerType string, params map[string]string) string {
	t.Helper()
	m := &machine.Machine{Hostname: host, Architecture: "amd64/generic", PowerType: powerType, PowerParams: params,
		Interfaces: []machine.Interface{{Name: "eth0", MAC: mac, Boot: true}}}
	if err := s.srv.Service.Create(t.Context(), machine.Actor{Name: "ada", Admin: true}, m, false); err != nil {
		t.Fatal(err)
	}
	return m.SystemID
}

// waitJS waits for a script expression to be true on the page.
func waitJS(t *testing.T, b *browser.Browser, what, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(b.Ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s still false after %v (err %v)", b.URL(), what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func text(t *testing.T, b *browser.Browser, sel string) string {
	t.Helper()
	return browser.Get(t, b, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {innerText: ""}).innerText`, sel)))
}

// TestFirstHourPages walks the pages a new operator sees in the first
// hour, in Chromium: the empty site says what it lacks and how to add it;
// the list sorts hostnames naturally and shows addresses, OS and "—" for
// what commissioning has not found; discoveries drop a MAC a machine has;
// the machine page offers only what its status allows, names its BMC in
// words, and its timeline can hide the boot steps of a boot loop (a choice
// it remembers) so that the lifecycle events stay in view.
func TestFirstHourPages(t *testing.T) {
	eachDB(t, func(t *testing.T, s *site) {
		key := s.apiKey(t)
		b := browser.New(t)
		b.Navigate(t, s.base+"/MAAS/machines")
		b.WaitText(t, "h1", "Log in", 15*time.Second)
		b.Run(t, chromedp.SendKeys(chromedp.CSS("#username"), "ada"), chromedp.SendKeys(chromedp.CSS("#password"), adaPass),
			chromedp.Click(chromedp.CSS("#login")))
		b.WaitText(t, "h1", "Machines", 15*time.Second)

		// The empty site: what is missing, and the command or page for each.
		gaps := b.WaitText(t, "#site-gaps", "No subnet with DHCP on", 15*time.Second)
		for _, want := range []string{"anvil subnets create", "No images", "settings page"} {
			if !strings.Contains(gaps, want) {
				t.Fatalf("the empty site's card does not say %q:\n%s", want, gaps)
			}
		}
		b.Screenshot(t, "empty-site")

		// An unknown MAC boots: a discovery. Then machines, one of them
		// with that MAC.
		s.bootEvents(t, key, rack.BootEvent{MAC: "52:54:00:dd:00:09", IP: "192.0.2.59", Kind: "dhcp", Detail: "ack 192.0.2.59"})
		b.Navigate(t, s.base+"/MAAS/discoveries")
		b.WaitText(t, "#discoveries", "52:54:00:dd:00:09", 15*time.Second)
		s.addMachine(t, "lab-10", "52:54:00:dd:00:0a", "manual", nil)
		two := s.addMachine(t, "lab-2", "52:54:00:dd:00:02", "manual", nil)
		one := s.addMachine(t, "lab-1", "52:54:00:dd:00:09", "ipmi",
			map[string]string{"power_address": "127.0.0.1:9", "power_user": "admin", "power_pass": "Bmc-secret-9"})
		b.Navigate(t, s.base+"/MAAS/discoveries")
		b.WaitText(t, "#discoveries", "Nothing unknown", 15*time.Second)
		if d := string(s.api(t, key, http.MethodGet, "discoveries/", nil)); strings.Contains(d, "52:54:00:dd:00:09") {
			t.Fatalf("the API still lists a machine's MAC as a discovery: %s", d)
		}

		// lab-2 gets an address and boot-loops: 250 boot steps after its
		// lifecycle events.
		var loop []rack.BootEvent
		for i := range 250 {
			loop = append(loop, rack.BootEvent{MAC: "52:54:00:dd:00:02", IP: "192.0.2.52", Kind: []string{"dhcp", "tftp", "config"}[i%3],
				Detail: fmt.Sprintf("step %d", i), At: time.Now().UTC()})
		}
		s.bootEvents(t, key, loop...)
		// lab-10 is deployed with an image.
		_, err := s.srv.Store.UpdateMachine(t.Context(), s.systemID(t, "lab-10"), func(m *machine.Machine) ([]machine.Event, error) {
			m.Status, m.Owner, m.OSystem, m.DistroSeries = machine.Deployed, "ada", "custom", "web-2026"
			return nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}

		b.Navigate(t, s.base+"/MAAS/machines")
		b.WaitText(t, "#machines", "lab-10", 15*time.Second)
		order := browser.Get(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#machines a.hostname")].map(a => a.textContent)`))
		if strings.Join(order, " ") != "lab-1 lab-2 lab-10" {
			t.Fatalf("the list shows %v; want lab-1 lab-2 lab-10", order)
		}
		waitJS(t, b, "lab-2's address in the list", `(() => { const r = document.querySelector('tr[data-id="`+two+`"]'); return !!r && r.querySelector(".ips").innerText.includes("192.0.2.52") })()`, 20*time.Second)
		row10 := text(t, b, `tr[data-id="`+s.systemID(t, "lab-10")+`"]`)
		if !strings.Contains(row10, "custom/web-2026") || strings.Count(row10, "—") < 3 {
			t.Fatalf("lab-10's row: %q; want its OS and — for CPU, memory and storage", row10)
		}
		b.Screenshot(t, "machines")

		// lab-1's page: its BMC in words, never the internal key or its
		// password; only what a New machine allows.
		b.Navigate(t, s.base+"/MAAS/machine/"+one)
		bmc := b.WaitText(t, "#machine-bmc", "IPMI at 127.0.0.1, port 9", 15*time.Second)
		html := browser.Get(t, b, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		if strings.Contains(html, "ipmi|127.0.0.1") || strings.Contains(html, "Bmc-secret-9") {
			t.Fatalf("the page shows the BMC's internal key or password: %s", bmc)
		}
		if hw := text(t, b, "#machine-hardware"); hw != "— · — · —" {
			t.Fatalf("an uncommissioned machine's hardware reads %q", hw)
		}
		if os := text(t, b, "#machine-os"); os != "—" {
			t.Fatalf("a New machine's OS reads %q", os)
		}
		buttons := func() string {
			return strings.Join(browser.Get(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#machine-actions button")].map(b => b.dataset.op)`)), " ")
		}
		if got, want := buttons(), "commission mark_broken rescue_mode power_on power_off delete"; got != want {
			t.Fatalf("a New machine offers %q; want %q", got, want)
		}
		if browser.Get(t, b, chromedp.Evaluate[bool](`document.querySelector(".deploy-image").offsetParent !== null`)) {
			t.Fatal("the image to deploy is offered on a machine that cannot be deployed")
		}
		// Marked broken, it offers what a Broken machine allows, without a
		// reload.
		b.Click(t, "#act-mark_broken")
		b.WaitText(t, "#machine-status", "Broken", 15*time.Second)
		waitJS(t, b, "mark fixed offered", `!!document.querySelector("#act-mark_fixed") && !document.querySelector("#act-mark_broken")`, 15*time.Second)

		// lab-2's page: the boot loop fills the newest 200 lines.
		b.Navigate(t, s.base+"/MAAS/machine/"+two)
		tl := b.WaitText(t, "#timeline", "Boot config", 15*time.Second)
		if strings.Contains(tl, "Created") {
			t.Fatal("the lifecycle event shows among 250 boot steps; the test needs them to push it out")
		}
		if ips := text(t, b, "#machine-ips"); ips != "192.0.2.52" {
			t.Fatalf("lab-2's addresses read %q", ips)
		}
		b.Click(t, "#hide-boot-steps")
		b.WaitText(t, "#timeline", "Created", 15*time.Second)
		if tl := text(t, b, "#timeline"); strings.Contains(tl, "Boot ") {
			t.Fatalf("boot steps still shown after hiding them:\n%s", tl)
		}
		b.Screenshot(t, "timeline-lifecycle")
		// The choice is remembered: a new page load hides them too.
		b.Navigate(t, s.base+"/MAAS/machine/"+two)
		b.WaitText(t, "#timeline", "Created", 15*time.Second)
		if !browser.Get(t, b, chromedp.Evaluate[bool](`document.querySelector("#hide-boot-steps").checked`)) {
			t.Fatal("the hide-boot-steps choice was not remembered")
		}
		b.Click(t, "#hide-boot-steps")
		b.WaitText(t, "#timeline", "Boot config", 15*time.Second)
	}, nil)
}

func (s *site) systemID(t *testing.T, host string) string {
	t.Helper()
	ms, err := s.srv.Store.ListMachines(t.Context(), store.MachineFilter{Hostnames: []string{host}})
	if err != nil || len(ms) != 1 {
		t.Fatalf("machine %s: %v %v", host, ms, err)
	}
	return ms[0].SystemID
}
