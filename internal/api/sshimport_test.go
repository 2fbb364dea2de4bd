package api_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/anvilmetal/anvil/internal/api"
	"github.com/anvilmetal/anvil/internal/serve"
)

// TestImportSSHKeys imports keys as `maas PROFILE sshkeys import
// keysource=gh:alice` sends it, from a local Launchpad and GitHub: the
// keys are stored with their keysource, a failed fetch is refused in words
// and stores nothing, and a user name that would change the path is
// refused before any request.
func TestImportSSHKeys(t *testing.T) {
	lp1, lp2, gh1 := testKey(11, "lp-one"), testKey(12, "lp-two"), testKey(13, "gh-one")
	var hits atomic.Int32
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/~alice/+sshkeys":
			// Launchpad: one key a line; an old DSA key and junk are skipped.
			w.Write([]byte(lp1 + "\nssh-dss AAAAB3NzaC1kc3M old\n\nnot a key\n" + lp2 + "\n"))
		case "/users/alice/keys":
			json.NewEncoder(w).Encode([]map[string]any{{"id": 1, "key": gh1}})
		case "/~empty/+sshkeys":
		case "/~broken/+sshkeys":
			http.Error(w, "down", http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	defer remote.Close()
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + dead.Addr().String()
	dead.Close()

	eachDB(t, func(t *testing.T, e *env) {
		importKeys := func(src string) wireAnswer {
			return e.cli("POST", "account/prefs/sshkeys/?op=import", e.user, cliBody(cliPart{name: "keysource", value: src}))
		}
		type key struct {
			ID        int64
			Key       string
			KeySource *string
		}
		keys := func() []key {
			var ks []key
			if err := json.Unmarshal(e.mustCLI(200, "GET", "account/prefs/sshkeys/", e.user, nil).body, &ks); err != nil {
				t.Fatal(err)
			}
			return ks
		}
		for _, c := range []struct{ src, body string }{
			{"lp:ghost", "Unable to import SSH keys. Launchpad user ghost doesn't exist."},
			{"gh:ghost", "Unable to import SSH keys. Github user ghost doesn't exist."},
			{"empty", "Unable to import SSH keys. There are no SSH keys for lp user empty."},
			{"lp:broken", "Unable to import SSH keys: Launchpad answered 500 Internal Server Error."},
			{"xx:alice", "Unknown protocol xx. Valid protocols are 'lp' and 'gh'."},
			{"", "Importing SSH keys failed. Input needs to be in protocol:auth_id or auth_id format."},
		} {
			if a := importKeys(c.src); a.code != 400 || string(a.body) != c.body {
				t.Errorf("import %q: %d %q, want 400 %q", c.src, a.code, a.body, c.body)
			}
		}
		before := hits.Load()
		if a := importKeys("lp:../users/alice/keys"); a.code != 400 || !strings.Contains(string(a.body), "is not a Launchpad user name") {
			t.Errorf("path in a user name: %d %s", a.code, a.body)
		}
		if hits.Load() != before {
			t.Errorf("a user name that is a path was fetched")
		}
		if ks := keys(); len(ks) != 0 {
			t.Fatalf("refused imports stored %+v", ks)
		}

		a := e.mustCLI(200, "POST", "account/prefs/sshkeys/?op=import", e.user, cliBody(cliPart{name: "keysource", value: "alice"}))
		var got []key
		if err := json.Unmarshal(a.body, &got); err != nil || len(got) != 2 || got[0].Key != lp1 || *got[0].KeySource != "lp:alice" || got[1].Key != lp2 {
			t.Fatalf("import lp: %s", a.body)
		}
		e.mustCLI(200, "POST", "account/prefs/sshkeys/?op=import", e.user, cliBody(cliPart{name: "keysource", value: "gh:alice"}))
		// Again: nothing twice.
		e.mustCLI(200, "POST", "account/prefs/sshkeys/?op=import", e.user, cliBody(cliPart{name: "keysource", value: "lp:alice"}))
		ks := keys()
		if len(ks) != 3 || *ks[2].KeySource != "gh:alice" || ks[2].Key != gh1 {
			t.Fatalf("keys after imports: %+v", ks)
		}
	}, func(c *serve.Config) { c.KeySources = api.KeySources{Launchpad: remote.URL, GitHub: remote.URL} })

	// Nothing listening: refused in words.
	e := start(t, "", func(c *serve.Config) { c.KeySources = api.KeySources{Launchpad: deadURL, GitHub: deadURL} })
	a := e.cli("POST", "account/prefs/sshkeys/?op=import", e.user, cliBody(cliPart{name: "keysource", value: "gh:alice"}))
	if a.code != 400 || !strings.HasPrefix(string(a.body), "Unable to import SSH keys: Github could not be reached (") {
		t.Fatalf("unreachable: %d %q", a.code, a.body)
	}
}
