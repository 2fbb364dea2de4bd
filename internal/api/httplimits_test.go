package api_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/httpserve"
	"github.com/anvilmetal/anvil/internal/serve"
)

func withHTTPLimits(l httpserve.Limits) option {
	return func(c *serve.Config) { c.HTTP = l }
}

// raiseFiles lifts the test's descriptor limit so that the test, not the
// process limit, decides how many sockets exist; it restores it after.
func raiseFiles(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	old := lim
	if lim.Cur < n && lim.Max >= n {
		lim.Cur = n
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
	}
	if lim.Cur < n {
		t.Skipf("descriptor limit %d < %d", lim.Cur, n)
	}
}

// from dials addr from the loopback address src, so that one test can be
// several clients as the server counts them.
func from(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// closedWithin reports whether the server closes c within d (a read
// returns EOF or a reset rather than timing out).
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

// A thousand idle keep-alive connections from one address: the server
// takes a bounded number of them, closes the rest at once and the ones it
// took once they idle past the limit, and another client's request is
// answered all along. Without the limits every one of them was held for
// ever, and under a 1,024-descriptor limit real requests timed out.
func TestIdleConnectionsCannotStarveTheAPI(t *testing.T) {
	raiseFiles(t, 4096)
	e := start(t, "", withHTTPLimits(httpserve.Limits{Idle: 2 * time.Second, PerAddress: 64}))
	floodIdle(t, e.srv.Addr.String(), "/MAAS/api/2.0/version/", 1000, 64, 2*time.Second)
}

// The rack's HTTP boot server has the same limits.
func TestIdleConnectionsCannotStarveHTTPBoot(t *testing.T) {
	raiseFiles(t, 4096)
	e := start(t, "", withHTTPLimits(httpserve.Limits{Idle: 2 * time.Second, PerAddress: 64}),
		func(c *serve.Config) { c.BootHTTPAddr = "127.0.0.1:0" })
	floodIdle(t, e.srv.Rack.HTTP.String(), "/grub/grub.cfg", 1000, 64, 2*time.Second)
}

// floodIdle opens n keep-alive connections to addr from 127.0.0.1, each
// making one request for path and then idling, and checks that at most
// perAddress were served, that a request from 127.0.0.2 is answered
// promptly meanwhile, and that the held ones are closed after idle.
func floodIdle(t *testing.T, addr, path string, n, perAddress int, idle time.Duration) {
	t.Helper()
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	get := "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"
	served := 0
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, get); err != nil {
			continue
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			served++
		}
	}
	if served > perAddress {
		t.Errorf("the server answered %d connections from one address at once; the cap is %d", served, perAddress)
	}
	if served == 0 {
		t.Fatal("no attacker connection was served at all: the test measures nothing")
	}
	t0 := time.Now()
	resp, err := from("127.0.0.2").Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("a real client's request failed while %d idle sockets were open: %v", n, err)
	}
	resp.Body.Close()
	took := time.Since(t0)
	t.Logf("%d idle connections from one address: %d held (cap %d), %d closed at once; another address's request took %v",
		n, served, perAddress, len(conns)-served, took.Round(time.Microsecond))
	if took > time.Second {
		t.Errorf("a real request took %v while the idle sockets were open", took)
	}
	open := 0
	for _, c := range conns {
		if !closedWithin(c, idle+4*time.Second) {
			open++
		}
	}
	if open > 0 {
		t.Errorf("%d idle keep-alive connections still open well past the %v idle limit", open, idle)
	}
}

// A slowloris that trickles its headers, and one that trickles a body,
// are cut off at the read limits.
func TestSlowClientsAreCutOff(t *testing.T) {
	e := start(t, "", withHTTPLimits(httpserve.Limits{ReadHeader: time.Second, Read: 2 * time.Second}))
	addr := e.srv.Addr.String()
	trickle := func(c net.Conn, s string, stop <-chan struct{}) {
		for i := 0; i < len(s); i++ {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if _, err := c.Write([]byte{s[i]}); err != nil {
				return
			}
		}
	}
	cases := map[string]struct{ head, rest string }{
		"headers": {"", "GET /MAAS/api/2.0/version/ HTTP/1.1\r\nHost: x\r\nX-Padding: " + strings.Repeat("a", 200) + "\r\n\r\n"},
		"body": {fmt.Sprintf("POST /MAAS/api/2.0/zones/ HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 400\r\n\r\n", oauth(e.admin)),
			"name=" + strings.Repeat("z", 395)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			stop := make(chan struct{})
			defer close(stop)
			io.WriteString(c, tc.head)
			go trickle(c, tc.rest, stop)
			// The trickle would take 40 s or more; the limit is 1-2 s.
			if !closedWithin(c, 8*time.Second) {
				t.Errorf("a client trickling its %s one byte per 200 ms was still connected after 8 s", name)
			}
		})
	}
}

// A request without credentials is refused before its body is read: the
// client announces 1,000,000 bytes and sends 9, and the answer comes at
// once, so the server read no more than those 9. Before, the body was
// parsed first (up to 1 MiB), and this request waited for ever.
func TestAnonymousBodyIsNotRead(t *testing.T) { eachDB(t, testAnonymousBodyIsNotRead) }

func testAnonymousBodyIsNotRead(t *testing.T, e *env) {
	const sent = "hostname="
	for _, path := range []string{"machines/", "zones/", "boot-resources/"} {
		c, err := net.Dial("tcp", e.srv.Addr.String())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "POST /MAAS/api/2.0/"+path+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000000\r\n\r\n"+sent)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		t0 := time.Now()
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			c.Close()
			t.Fatalf("POST %s: no answer while the announced body is not sent: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "credentials") {
			t.Errorf("POST %s: %d %q, want 401 saying credentials are required", path, resp.StatusCode, b)
		}
		t.Logf("POST %s without credentials: %d after %v, %d of 1,000,000 announced bytes sent", path, resp.StatusCode, time.Since(t0).Round(time.Microsecond), len(sent))
	}
	// With credentials a body well over the anonymous cap is read.
	desc := strings.Repeat("d", 1000)
	pad := strings.Repeat("p", 64<<10)
	code, b := e.call(http.MethodPost, "zones/", e.admin, url.Values{"name": {"bigbody"}, "description": {desc}, "padding": {pad}})
	if code != http.StatusOK {
		t.Errorf("authenticated 64 KiB POST: %d %s", code, b)
	}
}

// An event stream outlives the read and write limits; a download slower
// than the write limit, but steady, completes; so does a steady upload
// slower than the read limit.
func TestStreamsAndTransfersOutliveTheLimits(t *testing.T) {
	eachDB(t, testStreamsAndTransfers, withHTTPLimits(httpserve.Limits{Read: time.Second, Write: time.Second}),
		func(c *serve.Config) { c.BootHTTPAddr = "127.0.0.1:0" })
}

func testStreamsAndTransfers(t *testing.T, e *env) {

	t.Run("event stream", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		resp := e.watchEvents(ctx)
		defer resp.Body.Close()
		outlive(t, ctx, resp.Body, func() { e.addMachine("after-the-limits", "52:54:00:aa:00:01", nil) },
			func(l string) bool { return strings.Contains(l, "after-the-limits") })
	})

	t.Run("page stream", func(t *testing.T) {
		if err := serve.SetPassword(t.Context(), e.dataDir, e.dbURL, "ada", "Adas-password-1", true); err != nil {
			t.Fatal(err)
		}
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		pageLogin(t, c, e.base, "ada", "Adas-password-1")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"stream", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("page stream: %d", resp.StatusCode)
		}
		outlive(t, ctx, resp.Body, func() { e.addMachine("page-stream-change", "52:54:00:aa:00:02", nil) },
			func(l string) bool { return strings.HasPrefix(l, "event: change") })
	})

	t.Run("slow download", func(t *testing.T) {
		dir := filepath.Join(e.dataDir, "boot", "ephemeral")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		data := make([]byte, 48<<20)
		for i := range data {
			data[i] = byte(i * 7)
		}
		if err := os.WriteFile(filepath.Join(dir, "big.bin"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get("http://" + e.srv.Rack.HTTP.String() + "/ephemeral/big.bin")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		h := sha256.New()
		buf := make([]byte, 1<<20)
		t0 := time.Now()
		for {
			n, err := io.ReadFull(resp.Body, buf)
			h.Write(buf[:n])
			if err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond) // about 10 MB/s: 5 s in all
		}
		want := sha256.Sum256(data)
		if got := hex.EncodeToString(h.Sum(nil)); got != hex.EncodeToString(want[:]) {
			t.Fatalf("download cut short after %v (a 1 s write limit applied to the whole transfer?)", time.Since(t0).Round(time.Millisecond))
		}
	})

	t.Run("slow upload", func(t *testing.T) {
		data := []byte(strings.Repeat("anvil image bytes ", 1<<16)) // about 1.2 MB
		sum := sha256.Sum256(data)
		var res struct {
			Sets map[string]struct {
				Files map[string]struct {
					UploadURI string `json:"upload_uri"`
				} `json:"files"`
			} `json:"sets"`
		}
		e.must(http.StatusCreated, http.MethodPost, "boot-resources/", e.admin, url.Values{
			"name": {"custom/slow"}, "architecture": {"amd64/generic"}, "filetype": {"ddraw"},
			"sha256": {hex.EncodeToString(sum[:])}, "size": {fmt.Sprint(len(data))},
		}, &res)
		var uri string
		for _, s := range res.Sets {
			for _, f := range s.Files {
				uri = f.UploadURI
			}
		}
		if uri == "" {
			t.Fatal("no upload_uri")
		}
		pr, pw := io.Pipe()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for off := 0; off < len(data); off += 128 << 10 {
				end := min(off+128<<10, len(data))
				if _, err := pw.Write(data[off:end]); err != nil {
					return
				}
				time.Sleep(300 * time.Millisecond) // 10 pieces: 3 s in all
			}
			pw.Close()
		}()
		u, _ := url.Parse(e.base)
		u.Path = uri
		req, _ := http.NewRequest(http.MethodPut, u.String(), pr)
		req.ContentLength = int64(len(data))
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set("Authorization", oauth(e.admin))
		resp, err := http.DefaultClient.Do(req)
		wg.Wait()
		if err != nil {
			t.Fatalf("slow steady upload: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("slow steady upload: %d %s", resp.StatusCode, b)
		}
	})
}

// outlive reads the server-sent events in body, waits 3 s (past the
// test's 1 s limits), drops what came so far, calls change and wants a
// line for which seen is true before ctx ends.
func outlive(t *testing.T, ctx context.Context, body io.Reader, change func(), seen func(string) bool) {
	t.Helper()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	time.Sleep(3 * time.Second)
	for len(lines) > 0 {
		<-lines
	}
	change()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended within the read/write limits")
			}
			if seen(l) {
				return
			}
		case <-ctx.Done():
			t.Fatal("no news of the change made after 3 s")
		}
	}
}
