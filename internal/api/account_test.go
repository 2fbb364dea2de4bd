package api_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAuthorisationTokens drives account/ as `maas PROFILE account
// create-authorisation-token name=...` and its siblings send it: keys are
// made, listed, renamed and deleted by their owner only, and a deleted key
// is refused on the very next request.
func TestAuthorisationTokens(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		a := e.mustCLI(200, "POST", "account/?op=create_authorisation_token", e.user, cliBody(cliPart{name: "name", value: "ci runner"}))
		var made struct {
			TokenKey    string `json:"token_key"`
			TokenSecret string `json:"token_secret"`
			ConsumerKey string `json:"consumer_key"`
			Name        string `json:"name"`
		}
		if err := json.Unmarshal(a.body, &made); err != nil || made.Name != "ci runner" || made.TokenKey == "" || made.TokenSecret == "" || made.ConsumerKey == "" {
			t.Fatalf("create: %s (%v)", a.body, err)
		}
		key := made.ConsumerKey + ":" + made.TokenKey + ":" + made.TokenSecret
		e.mustCLI(200, "GET", "account/prefs/sshkeys/", key, nil)

		list := func(k string) map[string]string {
			t.Helper()
			a := e.mustCLI(200, "GET", "account/?op=list_authorisation_tokens", k, nil)
			var ts []struct{ Name, Token string }
			if err := json.Unmarshal(a.body, &ts); err != nil {
				t.Fatalf("list: %s (%v)", a.body, err)
			}
			out := map[string]string{}
			for _, t := range ts {
				out[t.Token] = t.Name
			}
			return out
		}
		if got := list(e.user); len(got) != 2 || got[key] != "ci runner" || got[e.user] != "MAAS consumer" {
			t.Fatalf("alice's tokens: %v", got)
		}
		if got := list(e.admin); len(got) != 1 || got[e.admin] != "MAAS consumer" {
			t.Fatalf("admin's tokens: %v", got)
		}

		a = e.mustCLI(202, "POST", "account/?op=update_token_name", e.user, cliBody(cliPart{name: "token", value: key}, cliPart{name: "name", value: "deploy bot"}))
		if string(a.body) != "Accepted" {
			t.Fatalf("rename: %q", a.body)
		}
		if got := list(e.user); got[key] != "deploy bot" {
			t.Fatalf("after rename: %v", got)
		}

		// Bad input: MAAS's words, nothing changed.
		for _, c := range []struct {
			op    string
			parts []cliPart
			code  int
			body  string
		}{
			{"delete_authorisation_token", nil, 400, "No provided token_key!"},
			{"update_token_name", []cliPart{{name: "token", value: made.TokenKey}}, 400, "No provided name!"},
			{"update_token_name", []cliPart{{name: "token", value: made.TokenKey}, {name: "name", value: strings.Repeat("n", 256)}}, 400,
				`{"name":["Ensure this value has at most 255 characters, on one line."]}` + "\n"},
			{"create_authorisation_token", []cliPart{{name: "name", value: "two\nlines"}}, 400,
				`{"name":["Ensure this value has at most 255 characters, on one line."]}` + "\n"},
			// Another user's key is not found for the admin either.
			{"delete_authorisation_token", []cliPart{{name: "token_key", value: made.TokenKey}}, 404, "No Token matches the given query."},
			{"update_token_name", []cliPart{{name: "token", value: key}, {name: "name", value: "mine"}}, 404, "No Token matches the given query."},
		} {
			a := e.cli("POST", "account/?op="+c.op, e.admin, cliBody(c.parts...))
			if a.code != c.code || string(a.body) != c.body {
				t.Errorf("%s %v: %d %q, want %d %q", c.op, c.parts, a.code, a.body, c.code, c.body)
			}
		}
		if got := list(e.user); len(got) != 2 || got[key] != "deploy bot" {
			t.Fatalf("refused calls changed alice's tokens: %v", got)
		}

		// A deleted key is refused at once; alice's other key still works.
		e.mustCLI(204, "POST", "account/?op=delete_authorisation_token", e.user, cliBody(cliPart{name: "token_key", value: made.TokenKey}))
		if a := e.cli("GET", "account/prefs/sshkeys/", key, nil); a.code != 401 {
			t.Fatalf("deleted key: %d %s", a.code, a.body)
		}
		// A key may delete itself; the request after is refused.
		e.mustCLI(204, "POST", "account/?op=delete_authorisation_token", e.user, cliBody(cliPart{name: "token_key", value: strings.Split(e.user, ":")[1]}))
		if a := e.cli("GET", "account/?op=list_authorisation_tokens", e.user, nil); a.code != 401 {
			t.Fatalf("key deleted by itself: %d %s", a.code, a.body)
		}
		if a := e.cli("GET", "account/?op=list_authorisation_tokens", "", nil); a.code != 401 {
			t.Fatalf("anonymous list: %d %s", a.code, a.body)
		}
	})
}
