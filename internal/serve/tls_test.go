package serve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// What the plain port does once TLS is on, for a client on another host
// (the loopback exemption leaves nothing to see from 127.0.0.1).
func TestPlainPortUnderTLS(t *testing.T) {
	h := plainUnderTLS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}), "5443")
	for _, tc := range []struct {
		name, method, path, remote, auth string
		code                             int
		location                         string
	}{
		{"metadata stays plain", "POST", "/MAAS/metadata/anvil/v1/hello", "192.0.2.10:4000", "", http.StatusTeapot, ""},
		{"metadata with its token", "GET", "/MAAS/metadata/latest/", "192.0.2.10:4000", "OAuth x", http.StatusTeapot, ""},
		{"image downloads stay plain", "GET", "/MAAS/api/2.0/images/abc", "192.0.2.10:4000", "", http.StatusTeapot, ""},
		{"health", "GET", "/healthz", "192.0.2.10:4000", "", http.StatusTeapot, ""},
		{"this host", "POST", "/MAAS/api/2.0/machines/", "127.0.0.1:4000", "OAuth x", http.StatusTeapot, ""},
		{"this host over IPv6", "POST", "/MAAS/api/2.0/machines/", "[::1]:4000", "OAuth x", http.StatusTeapot, ""},
		{"a page moves to HTTPS", "GET", "/MAAS/machines?q=a", "192.0.2.10:4000", "", http.StatusPermanentRedirect, "https://region.example:5443/MAAS/machines?q=a"},
		{"an API key is refused", "GET", "/MAAS/api/2.0/machines/", "192.0.2.10:4000", "OAuth x", http.StatusForbidden, ""},
		{"a login form is refused", "POST", "/MAAS/login", "[2001:db8::5]:4000", "", http.StatusForbidden, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "http://region.example:5240"+tc.path, nil)
			r.RemoteAddr = tc.remote
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.code {
				t.Fatalf("%d %q, want %d", w.Code, w.Body, tc.code)
			}
			if got := w.Header().Get("Location"); got != tc.location {
				t.Errorf("Location %q, want %q", got, tc.location)
			}
			if tc.code == http.StatusForbidden && !strings.Contains(w.Body.String(), "https://region.example:5443/") {
				t.Errorf("the refusal does not say where to go: %q", w.Body)
			}
		})
	}
}
