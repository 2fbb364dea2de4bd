package api_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/testutil/tlstest"
)

// With --tls-cert and --tls-key the API and the pages answer over HTTPS
// with that certificate, send HSTS, and a login's session cookie carries
// Secure; plain HTTP on the HTTPS port is refused.
func TestTLS(t *testing.T) {
	cert := tlstest.SelfSigned(t)
	e := start(t, "", func(c *serve.Config) {
		c.TLS = serve.TLSConfig{CertFile: cert.CertFile, KeyFile: cert.KeyFile, Listen: "127.0.0.1:0"}
	})
	if e.srv.TLSAddr == nil {
		t.Fatal("no HTTPS listener")
	}
	if err := serve.SetPassword(t.Context(), e.dataDir, "", "ada", "Adas-password-1", true); err != nil {
		t.Fatal(err)
	}
	base := "https://" + e.srv.TLSAddr.String() + "/MAAS/"
	jar, _ := cookiejar.New(nil)
	c := &http.Client{
		Timeout: 10 * time.Second, Jar: jar,
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	do := func(method, u string, form url.Values, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, u, strings.NewReader(form.Encode()))
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, u, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}

	resp, body := do("GET", base+"api/2.0/zones/", nil, map[string]string{"Authorization": oauth(e.admin)})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "default") {
		t.Fatalf("zones over HTTPS: %d %s", resp.StatusCode, body)
	}
	if got := resp.TLS.PeerCertificates[0].Subject.CommonName; got != "anvil test" {
		t.Errorf("served certificate %q, want the one given", got)
	}
	if h := resp.Header.Get("Strict-Transport-Security"); !strings.Contains(h, "max-age=") {
		t.Errorf("Strict-Transport-Security = %q", h)
	}

	// A login over HTTPS: the session cookie is Secure.
	resp = pageLogin(t, c, base, "ada", "Adas-password-1")
	sessions := 0
	for _, sc := range resp.Cookies() {
		if sc.MaxAge < 0 || sc.Value == "" {
			continue
		}
		sessions++
		if !sc.Secure || !sc.HttpOnly {
			t.Errorf("cookie %s: Secure=%v HttpOnly=%v over HTTPS", sc.Name, sc.Secure, sc.HttpOnly)
		}
	}
	if sessions == 0 {
		t.Fatal("login set no cookie")
	}
	if resp, body = do("GET", base+"machines", nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the machine page over HTTPS after login: %d %s", resp.StatusCode, body)
	}

	// Plain HTTP on the HTTPS port never reaches a handler.
	plain, err := http.Get("http://" + e.srv.TLSAddr.String() + "/MAAS/api/2.0/version/")
	if err != nil {
		t.Fatalf("plain HTTP to the HTTPS port: %v", err)
	}
	b, _ := io.ReadAll(plain.Body)
	plain.Body.Close()
	if plain.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "HTTPS") {
		t.Errorf("plain HTTP to the HTTPS port: %d %q, want 400", plain.StatusCode, b)
	}

	// The plain port keeps serving this host (the rack in this process).
	if code, body := e.call("GET", "zones/", e.admin, nil); code != http.StatusOK {
		t.Errorf("plain API from loopback under TLS: %d %s", code, body)
	}
}

// pageLogin logs c in to the web pages at base (…/MAAS/) and returns the
// answer to the login form, which sets the session cookie.
func pageLogin(t *testing.T, c *http.Client, base, user, pass string) *http.Response {
	t.Helper()
	get, err := c.Get(base + "login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(get.Body)
	get.Body.Close()
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no token on the login page:\n%s", page)
	}
	resp, err := c.PostForm(base+"login", url.Values{"csrf_token": {string(m[1])}, "username": {user}, "password": {pass}, "next": {"/MAAS/machines"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d %s", resp.StatusCode, b)
	}
	return resp
}
