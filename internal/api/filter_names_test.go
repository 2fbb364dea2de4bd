package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestFilterUnknownNames: machines read and allocate refuse a zone, pool
// or tag that does not exist with MAAS's field error, rather than
// answering an empty list; a name that exists but matches nothing is an
// empty list.
func TestFilterUnknownNames(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.addMachine("f1", "52:54:00:f1:00:01", nil)
		e.must(http.StatusOK, http.MethodPost, "zones/", e.admin, url.Values{"name": {"empty"}}, nil)
		for _, c := range []struct {
			method, path string
			form         url.Values
			want         string
		}{
			{"GET", "machines/", url.Values{"zone": {"atlantis"}}, `{"zone":["No such zone(s): atlantis."]}`},
			{"GET", "machines/", url.Values{"zone": {"default", "mu", "atlantis"}}, `{"zone":["No such zone(s): atlantis, mu."]}`},
			{"GET", "machines/", url.Values{"pool": {"nopool"}}, `{"pool":["No such pool(s): nopool."]}`},
			{"GET", "machines/", url.Values{"tags": {"gpu"}}, `{"tags":["No such tag(s): 'gpu'."]}`},
			{"GET", "nodes/", url.Values{"zone": {"atlantis"}}, `{"zone":["No such zone(s): atlantis."]}`},
			{"POST", "machines/?op=allocate", url.Values{"zone": {"atlantis"}}, `{"zone":["No such zone(s): atlantis."]}`},
		} {
			code, body := e.call(c.method, c.path, e.user, c.form)
			if code != http.StatusBadRequest || strings.TrimSpace(string(body)) != c.want {
				t.Errorf("%s %s %v: %d %s, want 400 %s", c.method, c.path, c.form, code, body, c.want)
			}
		}
		var ms []apiMachine
		e.must(http.StatusOK, http.MethodGet, "machines/", e.admin, url.Values{"zone": {"empty"}}, &ms)
		if len(ms) != 0 {
			t.Fatalf("an empty zone lists %d machines", len(ms))
		}
	})
}
