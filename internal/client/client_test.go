package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

const testKey = "ck:tk:s3cret"

// authRE is the exact header shape MAAS clients send: every field, in this
// order, quoted, comma-space separated.
var authRE = regexp.MustCompile(`^OAuth oauth_version="1\.0", oauth_signature_method="PLAINTEXT", ` +
	`oauth_consumer_key="([^"]*)", oauth_token="([^"]*)", oauth_signature="([^"]*)", ` +
	`oauth_nonce="([0-9a-f]{32})", oauth_timestamp="([0-9]+)"$`)

// checkAuth fails the test unless r carries testKey's signature.
func checkAuth(t *testing.T, r *http.Request) {
	t.Helper()
	m := authRE.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		t.Errorf("Authorization header %q has the wrong shape", r.Header.Get("Authorization"))
		return
	}
	if m[1] != "ck" || m[2] != "tk" || m[3] != "%26s3cret" {
		t.Errorf("Authorization fields = %q, %q, %q; want ck, tk, %%26s3cret", m[1], m[2], m[3])
	}
}

// newTestClient serves h (after checking each request's signature) and
// returns a client for it with fast retries.
func newTestClient(t *testing.T, h http.HandlerFunc) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checkAuth(t, r)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL+"/MAAS", testKey)
	if err != nil {
		t.Fatal(err)
	}
	c.retryMin, c.retryMax = 5*time.Millisecond, 20*time.Millisecond
	return c
}

func TestAuthorizationIsExact(t *testing.T) {
	creds := Credentials{ConsumerKey: "c k", TokenKey: "t~k", TokenSecret: "s&e/c+r=t"}
	got := creds.authorization(time.Unix(1700000000, 0), "n0nce")
	want := `OAuth oauth_version="1.0", oauth_signature_method="PLAINTEXT", ` +
		`oauth_consumer_key="c%20k", oauth_token="t~k", oauth_signature="%26s%26e%2Fc%2Br%3Dt", ` +
		`oauth_nonce="n0nce", oauth_timestamp="1700000000"`
	if got != want {
		t.Errorf("authorization:\n got %s\nwant %s", got, want)
	}
}

func TestEveryRequestIsSignedWithFreshNonce(t *testing.T) {
	nonces := map[string]bool{}
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		nonces[authRE.FindStringSubmatch(r.Header.Get("Authorization"))[4]] = true
		io.WriteString(w, `{"username":"admin"}`)
	})
	for range 3 {
		if _, err := c.WhoAmI(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(nonces) != 3 {
		t.Errorf("3 requests used %d distinct nonces", len(nonces))
	}
}

func TestPercentEncode(t *testing.T) {
	for in, want := range map[string]string{
		"AZaz09-._~": "AZaz09-._~",
		"&":          "%26",
		" +/=":       "%20%2B%2F%3D",
		"é":          "%C3%A9",
	} {
		if got := PercentEncode(in); got != want {
			t.Errorf("PercentEncode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseAPIKey(t *testing.T) {
	c, err := ParseAPIKey(" a:b:c\n")
	if err != nil || c != (Credentials{"a", "b", "c"}) {
		t.Errorf("ParseAPIKey = %+v, %v", c, err)
	}
	for _, bad := range []string{"", "a:b", "a::c", "a:b:c:d", "topsecret"} {
		_, err := ParseAPIKey(bad)
		if err == nil {
			t.Errorf("ParseAPIKey(%q) accepted", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("error %q repeats the key", err)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:5240/MAAS/":        "http://h:5240/MAAS/",
		"http://h:5240/MAAS":         "http://h:5240/MAAS/",
		"http://h:5240":              "http://h:5240/MAAS/",
		"http://h:5240/":             "http://h:5240/MAAS/",
		"h:5240":                     "http://h:5240/MAAS/",
		"https://h/MAAS/api/2.0/":    "https://h/MAAS/",
		"https://h/proxy/MAAS":       "https://h/proxy/MAAS/",
		" https://h/proxy/ ":         "https://h/proxy/MAAS/",
		"http://h:5240/MAAS/api/2.0": "http://h:5240/MAAS/",
	} {
		got, err := NormalizeURL(in)
		if err != nil || got != want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://h/", "http://h/?x=1", "http://u:p@h/", "http://"} {
		if got, err := NormalizeURL(bad); err == nil {
			t.Errorf("NormalizeURL(%q) = %q, want error", bad, got)
		}
	}
}

func TestRequestsGoToAPIPrefix(t *testing.T) {
	var got string
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Method + " " + r.URL.RequestURI()
		io.WriteString(w, `{"version":"3.5.0","subversion":"anvil","capabilities":["x"]}`)
	})
	v, err := c.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got != "GET /MAAS/api/2.0/version/" || v.Version != "3.5.0" || len(v.Capabilities) != 1 {
		t.Errorf("request %q, version %+v", got, v)
	}
}

func TestAPIErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{404, "No Machine matches the given query.", "404 Not Found: No Machine matches the given query."},
		{400, `{"hostname": ["Node with this Hostname already exists."], "__all__": ["Bad."]}`,
			"400 Bad Request: Bad.; hostname: Node with this Hostname already exists."},
		{409, `{"error": "cannot deploy a machine in status New"}`, "409 Conflict: cannot deploy a machine in status New"},
		{502, "<html><body>Bad gateway</body></html>", "502 Bad Gateway"},
		{500, "", "500 Internal Server Error"},
		{403, "line one\n  line two", "403 Forbidden: line one line two"},
	} {
		if got := (&APIError{Status: tc.status, Body: tc.body}).Error(); got != tc.want {
			t.Errorf("APIError{%d, %q} = %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
}

func TestNon2xxIsAPIError(t *testing.T) {
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "No Machine matches the given query.", http.StatusNotFound)
	})
	_, err := c.GetMachine(context.Background(), "nope")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Body != "No Machine matches the given query." {
		t.Fatalf("err = %#v", err)
	}
	if !IsNotFound(err) || err.Error() != "get machine nope: 404 Not Found: No Machine matches the given query." {
		t.Errorf("err = %q", err)
	}
}

func TestNetworkErrorNamesURL(t *testing.T) {
	c, err := New("http://127.0.0.1:1/MAAS/", testKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.WhoAmI(context.Background())
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("err = %v", err)
	}
}

func TestFormsAreURLEncoded(t *testing.T) {
	var ct string
	var form url.Values
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		ct = r.Header.Get("Content-Type")
		r.ParseForm()
		form = r.PostForm
		io.WriteString(w, `{"system_id":"x"}`)
	})
	_, err := c.CreateMachine(context.Background(), url.Values{
		"mac_addresses":            {"52:54:00:00:00:01", "52:54:00:00:00:02"},
		"power_parameters_address": {"10.0.0.1&x=y"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ct != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type = %q", ct)
	}
	if len(form["mac_addresses"]) != 2 || form.Get("power_parameters_address") != "10.0.0.1&x=y" {
		t.Errorf("form = %v", form)
	}
}

// TestClientMovesToTheNextServer: with several servers, a request that
// cannot reach its server fails, and the next goes to the next server;
// a server that answers, even with an error, keeps the requests.
func TestClientMovesToTheNextServer(t *testing.T) {
	hits := map[string]int{}
	serve := func(name string, code int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[name]++
			w.WriteHeader(code)
			_, _ = io.WriteString(w, `{"server":"`+name+`"}`)
		}))
	}
	dead := serve("dead", 200)
	dead.Close() // nothing listens there now
	one, two := serve("one", 500), serve("two", 200)
	defer one.Close()
	defer two.Close()
	c, err := NewMulti([]string{dead.URL, one.URL, two.URL}, testKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Do(ctx, "GET", "version/", nil, nil); err == nil {
		t.Fatal("a request to the dead server succeeded")
	}
	if !strings.HasPrefix(c.BaseURL(), one.URL) {
		t.Fatalf("after the dead server failed, requests go to %s", c.BaseURL())
	}
	for range 2 {
		var ae *APIError
		if _, err := c.Do(ctx, "GET", "version/", nil, nil); !errors.As(err, &ae) || ae.Status != 500 {
			t.Fatalf("server one's answer: %v", err)
		}
	}
	if hits["one"] != 2 || hits["two"] != 0 || !strings.HasPrefix(c.BaseURL(), one.URL) {
		t.Fatalf("a server that answers kept the requests: hits %v, now at %s", hits, c.BaseURL())
	}
	one.Close()
	if _, err := c.Do(ctx, "GET", "version/", nil, nil); err == nil {
		t.Fatal("a request to the closed server one succeeded")
	}
	if b, err := c.Do(ctx, "GET", "version/", nil, nil); err != nil || !strings.Contains(string(b), "two") {
		t.Fatalf("after server one went: %s %v", b, err)
	}
	if _, err := NewMulti(nil, testKey); err == nil {
		t.Error("a client with no server")
	}
}
