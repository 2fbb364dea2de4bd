package ui_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/password"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
)

// site is an Anvil on a loopback port with an admin "ada" whose password
// is set, and a cookie-keeping browser-like client.
type site struct {
	t    testing.TB
	base string
	srv  *serve.Server
	data string
	db   string // the database URL; "" for SQLite in data
}

const adaPass = "Correct-horse-1"

func start(t testing.TB) *site { return startWith(t, "", nil) }

// startWith is start on the database at dbURL ("" for SQLite in the data
// directory), with the configuration changed by opt when it is not nil.
func startWith(t testing.TB, dbURL string, opt func(*serve.Config)) *site {
	t.Helper()
	dir := t.TempDir()
	cfg := serve.Config{
		DataDir: dir, DBURL: dbURL, Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if opt != nil {
		opt(&cfg)
	}
	srv, err := serve.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	if err := serve.SetPassword(context.Background(), dir, dbURL, "ada", adaPass, true); err != nil {
		t.Fatal(err)
	}
	return &site{t: t, base: "http://" + srv.Addr.String(), srv: srv, data: dir, db: dbURL}
}

func newClient(t testing.TB) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

func (s *site) do(c *http.Client, method, path string, form url.Values, hdr map[string]string) (int, http.Header, string) {
	s.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, s.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

var (
	formToken = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)
	metaToken = regexp.MustCompile(`name="csrf-token" content="([^"]+)"`)
)

// login logs c in and returns the session's CSRF token.
func (s *site) login(c *http.Client, user, pass string) (int, string) {
	s.t.Helper()
	_, _, page := s.do(c, "GET", "/MAAS/login?next=/MAAS/settings", nil, nil)
	m := formToken.FindStringSubmatch(page)
	if m == nil {
		s.t.Fatalf("no token on the login page:\n%s", page)
	}
	code, h, _ := s.do(c, "POST", "/MAAS/login", url.Values{"csrf_token": {m[1]}, "username": {user}, "password": {pass}, "next": {"/MAAS/settings"}}, nil)
	if code != http.StatusSeeOther {
		return code, ""
	}
	if h.Get("Location") != "/MAAS/settings" {
		s.t.Fatalf("login sent the browser to %q", h.Get("Location"))
	}
	_, _, page = s.do(c, "GET", "/MAAS/machines", nil, nil)
	m = metaToken.FindStringSubmatch(page)
	if m == nil {
		s.t.Fatalf("no CSRF token on the machines page:\n%s", page)
	}
	return code, m[1]
}

func TestLoginAndSessions(t *testing.T) {
	s := start(t)
	c := newClient(t)

	// Not logged in: pages send the browser to log in, fragments say 401.
	code, h, _ := s.do(c, "GET", "/MAAS/machines?q=x", nil, nil)
	if code != http.StatusSeeOther || h.Get("Location") != "/MAAS/login?next=%2FMAAS%2Fmachines%3Fq%3Dx" {
		t.Fatalf("anonymous page: %d %q", code, h.Get("Location"))
	}
	if code, _, _ := s.do(c, "GET", "/MAAS/machines/rows", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("anonymous fragment: %d", code)
	}
	if code, _, _ := s.do(c, "GET", "/MAAS/stream", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("anonymous stream: %d", code)
	}

	// A login post without the form's token (another site's form) is refused.
	if code, _, body := s.do(newClient(t), "POST", "/MAAS/login", url.Values{"username": {"ada"}, "password": {adaPass}}, nil); code != http.StatusForbidden || !strings.Contains(body, "expired") {
		t.Fatalf("login without token: %d %s", code, body)
	}
	// Wrong password, unknown user: the same words.
	for _, tc := range [][2]string{{"ada", "wrong-password"}, {"nobody", adaPass}} {
		if code, _ := s.login(newClient(t), tc[0], tc[1]); code != http.StatusUnauthorized {
			t.Fatalf("login as %s with a wrong password: %d", tc[0], code)
		}
	}
	code, csrf := s.login(c, "ada", adaPass)
	if code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	var cookie *http.Cookie
	u, _ := url.Parse(s.base + "/MAAS/")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "anvil_session" {
			cookie = ck
		}
	}
	if cookie == nil {
		t.Fatal("no session cookie")
	}
	for _, p := range []string{"/MAAS/machines", "/MAAS/machines/add", "/MAAS/settings", "/MAAS/stats", "/MAAS/machines/rows", "/MAAS/stats/live"} {
		if code, h, body := s.do(c, "GET", p, nil, nil); code != http.StatusOK || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Fatalf("GET %s: %d (CSP %q)\n%s", p, code, h.Get("Content-Security-Policy"), body)
		}
	}

	// The API takes the cookie: reads as they are, changes only with the
	// session's CSRF token.
	if code, _, body := s.do(c, "GET", "/MAAS/api/2.0/machines/", nil, nil); code != http.StatusOK || strings.TrimSpace(body) != "[]" {
		t.Fatalf("API list with the cookie: %d %s", code, body)
	}
	add := url.Values{"hostname": {"web-1"}, "mac_addresses": {"52:54:00:aa:00:01"}, "architecture": {"amd64/generic"}}
	if code, _, body := s.do(c, "POST", "/MAAS/api/2.0/machines/", add, nil); code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
		t.Fatalf("API change without the CSRF token: %d %s", code, body)
	}
	if code, _, body := s.do(c, "POST", "/MAAS/api/2.0/machines/", add, map[string]string{"X-CSRFToken": csrf + "x"}); code != http.StatusForbidden {
		t.Fatalf("API change with a wrong CSRF token: %d %s", code, body)
	}
	if code, _, body := s.do(c, "POST", "/MAAS/api/2.0/machines/", add, map[string]string{"X-CSRFToken": csrf}); code != http.StatusOK || !strings.Contains(body, `"hostname": "web-1"`) && !strings.Contains(body, `"hostname":"web-1"`) {
		t.Fatalf("API change with the token: %d %s", code, body)
	}
	if code, _, body := s.do(c, "GET", "/MAAS/machines/rows", nil, nil); code != http.StatusOK || !strings.Contains(body, "web-1") {
		t.Fatalf("the list does not show the new machine: %d\n%s", code, body)
	}

	// Logging out needs the token too, then ends the session everywhere.
	if code, _, _ := s.do(c, "POST", "/MAAS/logout", url.Values{"csrf_token": {"forged"}}, nil); code != http.StatusForbidden {
		t.Fatalf("logout with a forged token: %d", code)
	}
	if code, _, _ := s.do(c, "POST", "/MAAS/logout", url.Values{"csrf_token": {csrf}}, nil); code != http.StatusSeeOther {
		t.Fatalf("logout: %d", code)
	}
	stolen := newClient(t)
	stolen.Jar.SetCookies(u, []*http.Cookie{{Name: "anvil_session", Value: cookie.Value, Path: "/MAAS/"}})
	if code, _, _ := s.do(stolen, "GET", "/MAAS/api/2.0/machines/", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("the API still takes a logged-out session: %d", code)
	}
}

func TestLoginRateLimit(t *testing.T) {
	s := start(t)
	limited := false
	for range 8 {
		if code, _ := s.login(newClient(t), "ada", "wrong-password"); code == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	if !limited {
		t.Fatal("eight wrong passwords in a row from one address were all checked")
	}
}

func TestStreamWakesOnChange(t *testing.T) {
	s := start(t)
	c := newClient(t)
	_, csrf := s.login(c, "ada", adaPass)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/MAAS/stream", nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream content type %q", ct)
	}
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				events <- sc.Text()
			}
		}
		close(events)
	}()
	first := <-events
	add := url.Values{"hostname": {"web-2"}, "mac_addresses": {"52:54:00:aa:00:02"}, "architecture": {"amd64/generic"}}
	if code, _, body := s.do(c, "POST", "/MAAS/api/2.0/machines/", add, map[string]string{"X-CSRFToken": csrf}); code != http.StatusOK {
		t.Fatalf("add: %d %s", code, body)
	}
	select {
	case next, ok := <-events:
		if !ok || next == first {
			t.Fatalf("after a change the stream said %q (first %q)", next, first)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no change notice within 10 s of adding a machine")
	}
}

// Every filter the list offers renders (a template error would be a 500).
func TestListPagesRender(t *testing.T) {
	s := start(t)
	c := newClient(t)
	s.login(c, "ada", adaPass)
	for _, q := range []string{"status=new", "status=new&status=ready&per_page=3", "power=error", "drift=1&sort=cpu&dir=desc",
		"zone=default&pool=default", "q=%3Cscript%3E", "page=7", "status=bogus&sort=nope"} {
		for _, p := range []string{"/MAAS/machines?", "/MAAS/machines/rows?"} {
			if code, _, body := s.do(c, "GET", p+q, nil, nil); code != http.StatusOK || strings.Contains(body, "<script>") {
				t.Errorf("GET %s%s: %d\n%s", p, q, code, body)
			}
		}
	}
}

// The settings page's forms go to the API: drift policy per pool and the
// poll interval, with the API's refusals in words.
func TestSettingsThroughAPI(t *testing.T) {
	s := start(t)
	c := newClient(t)
	_, csrf := s.login(c, "ada", adaPass)
	tok := map[string]string{"X-CSRFToken": csrf}
	if code, _, body := s.do(c, "PUT", "/MAAS/api/2.0/resourcepool/default/", url.Values{"drift_policy": {"warn"}}, tok); code != http.StatusOK {
		t.Fatalf("set the default pool's drift policy: %d %s", code, body)
	}
	if code, _, body := s.do(c, "PUT", "/MAAS/api/2.0/resourcepool/default/", url.Values{"drift_policy": {"sometimes"}}, tok); code != http.StatusBadRequest || !strings.Contains(body, "drift_policy") {
		t.Fatalf("a bad drift policy: %d %s", code, body)
	}
	for _, tc := range []struct {
		value string
		code  int
		want  string
	}{
		{"45", http.StatusOK, "45"},
		{"2m", http.StatusOK, "120"},
		{"5", http.StatusBadRequest, "outside"},
		{"soon", http.StatusBadRequest, "neither seconds nor a duration"},
	} {
		code, _, body := s.do(c, "POST", "/MAAS/api/2.0/maas/?op=set_config", url.Values{"name": {"power_poll_interval"}, "value": {tc.value}}, tok)
		if code == http.StatusOK {
			// MAAS answers "OK"; the value reads back in seconds.
			if strings.TrimSpace(body) != "OK" {
				t.Fatalf("set_config %q answered %q, want OK", tc.value, body)
			}
			code, _, body = s.do(c, "GET", "/MAAS/api/2.0/maas/?op=get_config&name=power_poll_interval", nil, nil)
		}
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Fatalf("set_config %q: %d %s; want %d with %q", tc.value, code, body, tc.code, tc.want)
		}
	}
	if code, _, body := s.do(c, "GET", "/MAAS/api/2.0/maas/?op=get_config&name=power_poll_interval", nil, nil); code != http.StatusOK || strings.TrimSpace(body) != "120" {
		t.Fatalf("get_config: %d %s", code, body)
	}
	if code, _, body := s.do(c, "POST", "/MAAS/api/2.0/maas/?op=set_config", url.Values{"name": {"maas_nickname"}, "value": {"x"}}, tok); code != http.StatusBadRequest || !strings.Contains(body, "is not a valid config setting") {
		t.Fatalf("an unknown setting: %d %s", code, body)
	}
	// The site's name heads every page.
	if code, _, body := s.do(c, "POST", "/MAAS/api/2.0/maas/?op=set_config", url.Values{"name": {"maas_name"}, "value": {"dc-west"}}, tok); code != http.StatusOK {
		t.Fatalf("set maas_name: %d %s", code, body)
	}
	if _, _, page := s.do(c, "GET", "/MAAS/machines", nil, nil); !strings.Contains(page, "<title>Machines · dc-west</title>") || !strings.Contains(page, `class="brand" href="/MAAS/machines">dc-west<`) {
		t.Fatalf("the pages do not carry the site's name:\n%.600s", page)
	}
	_, _, page := s.do(c, "GET", "/MAAS/settings", nil, nil)
	if !strings.Contains(page, `value="2m0s"`) || !strings.Contains(page, `<option value="warn" selected>`) {
		t.Fatalf("the settings page does not show the new settings:\n%s", page)
	}
}

// A non-admin sees free machines and its own, and settings without the
// controls the API would refuse it.
func TestNonAdminPages(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	if err := serve.SetPassword(ctx, s.data, "", "bob", "Bobs-password-1", false); err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	if code, _ := s.login(c, "bob", "Bobs-password-1"); code != http.StatusSeeOther {
		t.Fatalf("bob's login: %d", code)
	}
	_, _, page := s.do(c, "GET", "/MAAS/settings", nil, nil)
	if !strings.Contains(page, `id="readonly-note"`) || !strings.Contains(page, `class="readonly"`) || strings.Contains(page, `href="/MAAS/machines/add"`) {
		t.Fatalf("bob's settings page offers what he may not do:\n%s", page)
	}
}

// Unknown MACs the rack saw are listed, with a way to add each.
func TestDiscoveriesPage(t *testing.T) {
	s := start(t)
	c := newClient(t)
	s.login(c, "ada", adaPass)
	now := time.Now()
	if err := s.srv.Store.NoteDiscovery(context.Background(), store.Discovery{MAC: "52:54:00:d1:00:01", IP: "192.0.2.50",
		FirstSeen: now, LastSeen: now, Seen: 1, LastWhat: "DHCP discover"}); err != nil {
		t.Fatal(err)
	}
	_, _, page := s.do(c, "GET", "/MAAS/discoveries", nil, nil)
	if !strings.Contains(page, "52:54:00:d1:00:01") || !strings.Contains(page, `href="/MAAS/machines/add?mac=52%3a54%3a00%3ad1%3a00%3a01"`) {
		t.Fatalf("discoveries page:\n%s", page)
	}
	_, _, page = s.do(c, "GET", "/MAAS/machines/add?mac=52:54:00:d1:00:01", nil, nil)
	if !strings.Contains(page, `value="52:54:00:d1:00:01"`) {
		t.Fatalf("the add page is not prefilled:\n%s", page)
	}
}

// Guessing one account's password from many addresses is limited per
// account too, and an account that exists answers as one that does not.
func TestLoginLimitPerAccount(t *testing.T) {
	s := start(t)
	codes := func(user string, first int) []int {
		var out []int
		for i := 0; i < 12; i++ {
			// Each attempt from its own loopback address: the per-address
			// limit never applies.
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, byte(first), byte(10+i))}}
			c := newClient(t)
			c.Transport = &http.Transport{DialContext: d.DialContext}
			code, _ := s.login(c, user, "wrong-password")
			out = append(out, code)
		}
		return out
	}
	known, unknown := codes("ada", 1), codes("nobody", 2)
	for i := range known {
		want := http.StatusUnauthorized
		if i >= 10 {
			want = http.StatusTooManyRequests
		}
		if known[i] != want {
			t.Errorf("attempt %d on ada from a fresh address: %d, want %d", i+1, known[i], want)
		}
		if unknown[i] != known[i] {
			t.Errorf("attempt %d: an unknown user answers %d, ada %d", i+1, unknown[i], known[i])
		}
	}
	// While limited, even the right password is not checked.
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 3, 1)}}
	c := newClient(t)
	c.Transport = &http.Transport{DialContext: d.DialContext}
	if code, _ := s.login(c, "ada", adaPass); code != http.StatusTooManyRequests {
		t.Errorf("the right password during the lock: %d, want 429", code)
	}
}

// TestLoginRefusalsCostTheSame: a name that does not exist, an account
// without a web password and a wrong password are each refused after one
// full key derivation, so how long a refusal takes does not tell them
// apart; before, an account without a password was refused at once.
func TestLoginRefusalsCostTheSame(t *testing.T) {
	eachDB(t, func(t *testing.T, s *site) {
		// An API key makes an account without a web password.
		if _, err := serve.APIKey(t.Context(), s.data, s.db, "bob"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ what, user, pass string }{
			{"a name that does not exist", "nobody", adaPass},
			{"an account without a web password", "bob", adaPass},
			{"a wrong password", "ada", "wrong-password"},
		} {
			before := password.Computed()
			start := time.Now()
			if code, _ := s.login(newClient(t), tc.user, tc.pass); code != http.StatusUnauthorized {
				t.Fatalf("%s: %d; want 401", tc.what, code)
			}
			took := time.Since(start)
			if n := password.Computed() - before; n != 1 {
				t.Errorf("%s cost %d key derivations; want 1, as every refusal", tc.what, n)
			}
			t.Logf("%s: refused in %v", tc.what, took.Round(time.Millisecond))
		}
	}, nil)
}
