package browser

import (
	"bytes"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/anvilmetal/anvil/internal/testutil/netns"
)

const livePage = `<!doctype html>
<html><head><title>live</title></head><body>
<button id="btn" onclick="document.getElementById('out').textContent = 'clicked'">press</button>
<p id="out">not yet</p>
<p id="live">tick 0</p>
<div style="height: 2500px">tall, so a full-page screenshot is taller than the viewport</div>
<script>
let n = 0;
setInterval(() => { n++; document.getElementById('live').textContent = 'tick ' + n; }, 100);
</script>
</body></html>`

const errorPage = `<!doctype html>
<html><head><title>broken</title></head><body>
<p id="p">broken page</p>
<img src="/missing.png" alt="">
<script>
console.log("harmless");
console.warn("also harmless");
console.error("console-error", 42);
console.assert(1 === 2, "assert-failed");
throw new Error("boom-from-page");
</script>
</body></html>`

func newServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/{$}", page(livePage))
	mux.HandleFunc("/error", page(errorPage))
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv
}

func TestClickWaitTextScreenshot(t *testing.T) {
	srv := newServer(t)
	shots := t.TempDir()
	t.Setenv("ANVIL_SCREENSHOTS", shots)
	b := New(t)

	b.Navigate(t, srv.URL+"/")
	if got := b.URL(); got != srv.URL+"/" {
		t.Errorf("URL() = %q, want %q", got, srv.URL+"/")
	}
	if got := b.Text(t, "#out"); got != "not yet" {
		t.Fatalf("#out before click = %q", got)
	}
	b.Click(t, "#btn")
	if got := b.WaitText(t, "#out", "clicked", 5*time.Second); got != "clicked" {
		t.Errorf("#out after click = %q", got)
	}
	// The page's own timer changes the text; nothing here touches it.
	b.WaitText(t, "#live", "tick 5", 10*time.Second)
	if n := Get(t, b, chromedp.Evaluate[int](`n`)); n < 5 {
		t.Errorf("page counter = %d after WaitText saw tick 5", n)
	}

	path := b.Screenshot(t, "live page")
	if filepath.Dir(path) != shots {
		t.Errorf("screenshot in %s, want in $ANVIL_SCREENSHOTS %s", path, shots)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if cfg.Width != 1400 || cfg.Height <= 900 {
		t.Errorf("screenshot is %dx%d, want 1400 wide and the full page (> 900) tall", cfg.Width, cfg.Height)
	}
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("errors on a clean page: %v", errs)
	}
}

func TestScreenshotWithoutEnvGoesToTestDir(t *testing.T) {
	srv := newServer(t)
	t.Setenv("ANVIL_SCREENSHOTS", "")
	b := New(t, Viewport(800, 600))
	b.Navigate(t, srv.URL+"/")
	path := b.Screenshot(t, "small")
	fi, err := os.Stat(path)
	if err != nil || fi.Size() == 0 {
		t.Fatalf("screenshot %s: %v, %v", path, fi, err)
	}
	data, _ := os.ReadFile(path)
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width != 800 {
		t.Errorf("screenshot config %+v, %v; want 800 wide", cfg, err)
	}
}

// fakeTB records failures instead of failing, to show that the assertion
// would fail the test.
type fakeTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Error(args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprint(args...))
}
func (f *fakeTB) Errorf(format string, args ...any) { f.Error(fmt.Sprintf(format, args...)) }

func TestCollectsConsoleErrors(t *testing.T) {
	srv := newServer(t)
	b := New(t)
	b.Navigate(t, srv.URL+"/error")

	// The image's 404 is reported asynchronously; wait for all four.
	deadline := time.Now().Add(10 * time.Second)
	for len(b.ConsoleErrors()) < 4 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	errs := b.ConsoleErrors()
	want := map[string]string{
		"console.error":  "console-error 42",
		"console.assert": "assert-failed",
		"exception":      "boom-from-page",
		"log":            "404",
	}
	for kind, text := range want {
		found := false
		for _, e := range errs {
			if e.Kind == kind && strings.Contains(e.Text, text) {
				found = true
				if e.PageURL != srv.URL+"/error" {
					t.Errorf("%s: page URL %q, want %q", kind, e.PageURL, srv.URL+"/error")
				}
			}
		}
		if !found {
			t.Errorf("no %s error containing %q in %v", kind, text, errs)
		}
	}
	for _, e := range errs {
		if strings.Contains(e.Text, "harmless") {
			t.Errorf("log or warning collected as an error: %v", e)
		}
	}

	fake := &fakeTB{TB: t}
	b.AssertNoConsoleErrors(fake)
	if len(fake.errors) != 1 || !strings.Contains(fake.errors[0], "boom-from-page") ||
		!strings.Contains(fake.errors[0], srv.URL+"/error") {
		t.Fatalf("AssertNoConsoleErrors reported %q, want one failure naming the exception and the page", fake.errors)
	}
	// Already reported errors are not reported twice.
	fake.errors = nil
	b.AssertNoConsoleErrors(fake)
	if len(fake.errors) != 0 {
		t.Errorf("second assertion reported %q", fake.errors)
	}

	b.ClearConsoleErrors()
	b.Allow("boom-from-page", "console-error", "assert-failed", "missing.png", "404")
	b.Navigate(t, srv.URL+"/error")
	b.Text(t, "#p")
	time.Sleep(500 * time.Millisecond) // let the 404 arrive, to be allowed
	fake.errors = nil
	b.AssertNoConsoleErrors(fake)
	if len(fake.errors) != 0 {
		t.Errorf("allowed errors reported: %q", fake.errors)
	}
	// The cleanup's own assertion now passes: everything left is allowed.
}

func TestAllowOption(t *testing.T) {
	srv := newServer(t)
	b := New(t, AllowConsoleErrors(srv.URL+"/error"))
	b.Navigate(t, srv.URL+"/error")
	b.Text(t, "#p")
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("errors on an allowed page: %v", errs)
	}
}

func TestRunInNetNS(t *testing.T) {
	ns := netns.New(t, fmt.Sprintf("anvbrowser%d", os.Getpid()))
	var ln net.Listener
	if err := ns.Do(func() (err error) {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><p id="where">inside the namespace</p>`)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	b := New(t, InNetNS(ns.Name))
	b.Navigate(t, "http://"+ln.Addr().String()+"/")
	if got := b.Text(t, "#where"); got != "inside the namespace" {
		t.Errorf("text = %q", got)
	}
}
