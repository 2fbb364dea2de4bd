// Package browser drives a headless Chromium for tests of the web UI: it
// starts the browser, records the page's JavaScript errors (a test fails on
// them by default), and wraps chromedp's actions in calls that fail the test
// with the page's URL instead of returning errors.
//
//	b := browser.New(t)
//	b.Run(t, chromedp.Navigate(srv.URL+"/MAAS/"), chromedp.Click(chromedp.CSS("#deploy")))
//	b.WaitText(t, "#status", "Deployed", time.Minute)
//	b.Screenshot(t, "deployed")
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

const (
	defaultChromium = "/usr/bin/chromium"
	defaultTimeout  = 30 * time.Second
	// Starting Chromium on a loaded two-core CI machine takes a few seconds;
	// a browser that is not up after this is not going to come up.
	startTimeout = 60 * time.Second
)

// Option changes how New starts the browser.
type Option func(*config)

type config struct {
	netns          string
	allow          []string
	width, height  int64
	timeout        time.Duration
	noCleanupCheck bool
}

// InNetNS runs the browser inside network namespace ns (made with `ip netns
// add`), so that it reaches servers listening only inside it.
func InNetNS(ns string) Option { return func(c *config) { c.netns = ns } }

// AllowConsoleErrors ignores console errors whose text or URL contains any of
// the substrings, in AssertNoConsoleErrors and in the check at cleanup.
func AllowConsoleErrors(substrings ...string) Option {
	return func(c *config) { c.allow = append(c.allow, substrings...) }
}

// Viewport sets the size of the page's viewport in CSS pixels (default
// 1400x900).
func Viewport(width, height int) Option {
	return func(c *config) { c.width, c.height = int64(width), int64(height) }
}

// Timeout sets how long one Run may take (default 30 s).
func Timeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// NoConsoleCheckAtCleanup leaves console errors unchecked when the test ends;
// for tests that provoke errors on purpose and inspect ConsoleErrors.
func NoConsoleCheckAtCleanup() Option { return func(c *config) { c.noCleanupCheck = true } }

// ConsoleError is a JavaScript error the page reported.
type ConsoleError struct {
	Kind    string // "console.error", "console.assert", "exception" or "log"
	Text    string
	PageURL string // the page shown when it happened
	Source  string // script or resource URL with line, when known
}

func (e ConsoleError) String() string {
	s := e.Kind + ": " + e.Text
	if e.Source != "" {
		s += " (at " + e.Source + ")"
	}
	return s + " on " + e.PageURL
}

// Browser is one headless Chromium with one tab.
type Browser struct {
	// Ctx is the tab's chromedp context, for calls the helpers do not cover
	// (chromedp.Run(b.Ctx, ...)). It has no deadline: derive one per call.
	Ctx context.Context

	cfg     config
	dataDir string

	mu        sync.Mutex
	url       string
	mainFrame cdp.FrameID
	errs      []ConsoleError
	reported  int // errs[:reported] were already reported by AssertNoConsoleErrors

	shotDir string
}

// New starts Chromium for the test and closes it when the test ends. Without
// Chromium the test is skipped, unless ANVIL_REQUIRE_BROWSER is set: then it
// fails, so that a CI machine missing the package cannot pass by skipping.
func New(t testing.TB, opts ...Option) *Browser {
	t.Helper()
	b := &Browser{cfg: config{width: 1400, height: 900, timeout: defaultTimeout}}
	for _, o := range opts {
		o(&b.cfg)
	}

	exe := os.Getenv("ANVIL_CHROMIUM")
	if exe == "" {
		exe = defaultChromium
	}
	if _, err := exec.LookPath(exe); err != nil {
		msg := fmt.Sprintf("chromium not found at %s (apt-get install chromium, or set ANVIL_CHROMIUM): %v", exe, err)
		if os.Getenv("ANVIL_REQUIRE_BROWSER") != "" {
			t.Fatalf("%s; ANVIL_REQUIRE_BROWSER is set", msg)
		}
		t.Skip(msg)
	}
	if b.cfg.netns != "" {
		exe = netnsWrapper(t, b.cfg.netns, exe)
	}

	b.dataDir = t.TempDir()
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(b.dataDir),
		// Chromium keeps its singleton socket in a directory under TMPDIR
		// that only a clean exit removes; in the test's directory, a killed
		// browser leaves nothing behind.
		chromedp.Env("TMPDIR="+t.TempDir()),
	)
	// The listener sees every event from the tab's first message, so errors
	// of the very first page load are not missed.
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithListener(b.listen))
	b.Ctx = ctx

	var proc *os.Process
	t.Cleanup(func() {
		if !b.cfg.noCleanupCheck && !t.Skipped() {
			b.AssertNoConsoleErrors(t)
		}
		cancel()
		if proc != nil {
			// chromedp kills Chromium when the context ends, through
			// exec.CommandContext; not relying on that detail costs nothing.
			// The os.Process holds a pidfd, so a reused pid is never hit.
			_ = proc.Kill()
		}
		allocCancel()
		// Renderer and utility processes can outlive the main one and keep
		// writing into the profile, which would make t.TempDir's removal fail.
		killUsing(b.dataDir)
	})

	// The first action binds the browser's life to its context, so it gets
	// the undeadlined one; the start is bounded by waiting on it here.
	started := make(chan error, 1)
	go func() {
		started <- chromedp.Do(ctx,
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				// chromedp enables the log domain itself today; enabling it
				// again is harmless and keeps error entries coming if it stops.
				_, err := cdp.Call(ctx, tg, cdplog.Enable, cdp.Empty{})
				return err
			}),
			chromedp.EmulateViewport(b.cfg.width, b.cfg.height),
		)
	}()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("starting %s: %v", exe, err)
		}
	case <-time.After(startTimeout):
		t.Fatalf("starting %s: not up after %v", exe, startTimeout)
	}
	if c := chromedp.FromContext(ctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		proc = c.Browser.Process()
	}
	return b
}

// netnsWrapper writes a script that starts exe inside namespace ns; the
// allocator execs it in place of Chromium. exec keeps the pid and the
// DevTools pipe descriptors, so chromedp still talks to and kills Chromium.
func netnsWrapper(t testing.TB, ns, exe string) string {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("running the browser in netns %s needs ip (iproute2): %v", ns, err)
	}
	path := filepath.Join(t.TempDir(), "chromium-in-"+sanitize(ns))
	script := fmt.Sprintf("#!/bin/sh\nexec ip netns exec %s %s \"$@\"\n", shellQuote(ns), shellQuote(exe))
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// killUsing kills, by pid, every process started with profile dir, and waits
// until none is left (a dying zygote may still fork).
func killUsing(dir string) {
	want := []byte("--user-data-dir=" + dir + "\x00")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := 0
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil || !strings.Contains(string(cmdline), string(want)) {
				continue
			}
			found++
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if found == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listen runs on chromedp's event loop: it must not block or send commands.
func (b *Browser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *page.EventFrameNavigated:
		if ev.Frame != nil && ev.Frame.ParentID == "" {
			b.url = ev.Frame.URL + ev.Frame.URLFragment
			b.mainFrame = ev.Frame.ID
		}
	case *page.EventNavigatedWithinDocument:
		if ev.FrameID == b.mainFrame {
			b.url = ev.URL
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		b.errs = append(b.errs, ConsoleError{
			Kind:    "console." + string(ev.Type),
			Text:    argsText(ev.Args),
			PageURL: b.url,
			Source:  stackSource(ev.StackTrace),
		})
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		if d == nil {
			return
		}
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			desc, _, _ := strings.Cut(d.Exception.Description, "\n")
			text += " " + desc
		}
		src := stackSource(d.StackTrace)
		if src == "" && d.URL != "" {
			src = fmt.Sprintf("%s:%d", d.URL, d.LineNumber+1)
		}
		b.errs = append(b.errs, ConsoleError{Kind: "exception", Text: text, PageURL: b.url, Source: src})
	case *cdplog.EventEntryAdded:
		e := ev.Entry
		if e == nil || e.Level != cdplog.EntryLevelError {
			return
		}
		// Chromium asks for /favicon.ico on its own; a server without one is
		// not a page error.
		if e.Source == cdplog.EntrySourceNetwork && strings.HasSuffix(e.URL, "/favicon.ico") {
			return
		}
		src := e.URL
		if src != "" && e.LineNumber > 0 {
			src += ":" + strconv.FormatInt(e.LineNumber+1, 10)
		}
		b.errs = append(b.errs, ConsoleError{Kind: "log", Text: e.Text, PageURL: b.url, Source: src})
	}
}

func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if a == nil {
			continue
		}
		switch {
		case a.Type == runtime.RemoteObjectTypeString && len(a.Value) > 0:
			if s, err := strconv.Unquote(string(a.Value)); err == nil {
				parts = append(parts, s)
			} else {
				parts = append(parts, string(a.Value))
			}
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		case a.Description != "":
			parts = append(parts, a.Description)
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

func stackSource(st *runtime.StackTrace) string {
	if st == nil || len(st.CallFrames) == 0 {
		return ""
	}
	f := st.CallFrames[0]
	return fmt.Sprintf("%s:%d:%d", f.URL, f.LineNumber+1, f.ColumnNumber+1)
}

// ConsoleErrors returns the errors collected so far that are not allowed by
// AllowConsoleErrors or Allow.
func (b *Browser) ConsoleErrors() []ConsoleError {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.filter(b.errs)
}

func (b *Browser) filter(errs []ConsoleError) []ConsoleError {
	var out []ConsoleError
next:
	for _, e := range errs {
		for _, s := range b.cfg.allow {
			if strings.Contains(e.Text, s) || strings.Contains(e.Source, s) || strings.Contains(e.PageURL, s) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// Allow adds substrings of console errors to ignore from now on, like the
// AllowConsoleErrors option.
func (b *Browser) Allow(substrings ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cfg.allow = append(b.cfg.allow, substrings...)
}

// ClearConsoleErrors forgets the errors collected so far, after a test has
// checked errors it provoked on purpose.
func (b *Browser) ClearConsoleErrors() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errs, b.reported = nil, 0
}

// AssertNoConsoleErrors fails the test, listing them, if the page reported
// JavaScript errors since the last call. It also runs when the test ends.
func (b *Browser) AssertNoConsoleErrors(t testing.TB) {
	t.Helper()
	b.mu.Lock()
	errs := b.filter(b.errs[b.reported:])
	b.reported = len(b.errs)
	b.mu.Unlock()
	if len(errs) == 0 {
		return
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "the browser reported %d JavaScript error(s):", len(errs))
	for _, e := range errs {
		sb.WriteString("\n\t" + e.String())
	}
	t.Error(sb.String())
}

// URL is the address of the page the tab shows, as of the last navigation.
func (b *Browser) URL() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.url
}

// Run runs the actions in order, each call bounded by the Timeout option, and
// fails the test with the current URL if one fails.
func (b *Browser) Run(t testing.TB, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, b.cfg.timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser on %s: %v", b.URL(), err)
	}
}

// Get runs one action that yields a value (chromedp.Text, chromedp.Evaluate,
// ...) under the Timeout option and returns the value, failing the test with
// the current URL on error.
func Get[T any](t testing.TB, b *Browser, action chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, b.cfg.timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		t.Fatalf("browser on %s: %v", b.URL(), err)
	}
	return v
}

// Navigate loads url and waits for its load event.
func (b *Browser) Navigate(t testing.TB, url string) {
	t.Helper()
	b.Run(t, chromedp.Navigate(url))
}

// Text returns the rendered text of the first element matching CSS selector
// sel, waiting (up to the Timeout option) for it to appear.
func (b *Browser) Text(t testing.TB, sel string) string {
	t.Helper()
	return Get(t, b, chromedp.Text(chromedp.CSS(sel)))
}

// Click clicks the first element matching CSS selector sel once it is visible.
func (b *Browser) Click(t testing.TB, sel string) {
	t.Helper()
	b.Run(t, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

const pollInterval = 100 * time.Millisecond

// WaitText polls until the text of the first element matching CSS selector
// sel contains substring, and returns that text. It is for pages that update
// themselves: it survives the element being absent or replaced, and the page
// reloading, until timeout, when it fails the test with the last text seen.
func (b *Browser) WaitText(t testing.TB, sel, substring string, timeout time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, timeout)
	defer cancel()
	expr := fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e ? e.innerText : null })()`,
		strconv.Quote(sel))
	last, lastErr := "(no element yet)", error(nil)
	for {
		// A navigation in progress destroys the execution context under the
		// call; that and a missing element are reasons to poll again.
		text, err := chromedp.Run(ctx, chromedp.Evaluate[*string](expr))
		switch {
		case err == nil && text != nil:
			if strings.Contains(*text, substring) {
				return *text
			}
			last, lastErr = *text, nil
		case err == nil:
			last, lastErr = "(no element matches)", nil
		case ctx.Err() == nil:
			lastErr = err
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("browser on %s: %q did not show %q within %v; last text: %q",
				b.URL(), sel, substring, timeout, last)
			if lastErr != nil {
				msg += fmt.Sprintf("; last error: %v", lastErr)
			}
			t.Fatal(msg)
			return ""
		case <-time.After(pollInterval):
		}
	}
}

// Screenshot saves a PNG of the whole page (not just the viewport) and
// returns its path: in $ANVIL_SCREENSHOTS if set, so a CI run can keep them,
// else in a directory of the test's. The file name is the test's name and
// name.
func (b *Browser) Screenshot(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("ANVIL_SCREENSHOTS")
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("screenshot directory: %v", err)
		}
	} else {
		if b.shotDir == "" {
			b.shotDir = t.TempDir()
		}
		dir = b.shotDir
	}
	png := Get(t, b, fullPagePNG(float64(b.cfg.width), float64(b.cfg.height)))
	path := filepath.Join(dir, sanitize(t.Name())+"--"+sanitize(name)+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	t.Logf("screenshot of %s: %s", b.URL(), path)
	return path
}

// fullPagePNG clips to the document's full size: chromedp's FullScreenshot
// only captures beyond the viewport when told how far. The viewport's size is
// the minimum, so short pages still show what the user would see, scrollbar
// included.
func fullPagePNG(minWidth, minHeight float64) chromedp.Action[[]byte] {
	return func(ctx context.Context, tg *chromedp.Target) ([]byte, error) {
		m, err := cdp.Call(ctx, tg, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return nil, err
		}
		if m.CSSContentSize == nil {
			return nil, errors.New("page reports no content size")
		}
		w, h := max(m.CSSContentSize.Width, minWidth), max(m.CSSContentSize.Height, minHeight)
		r, err := cdp.Call(ctx, tg, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format:                page.CaptureScreenshotFormatPng,
			CaptureBeyondViewport: new(true),
			FromSurface:           new(true),
			Clip:                  &page.Viewport{Width: w, Height: h, Scale: 1},
		})
		if err != nil {
			return nil, err
		}
		return r.Data, nil
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func sanitize(s string) string { return strings.Trim(unsafeName.ReplaceAllString(s, "_"), "_") }
