package api_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestDNSConflictingCreatesRace sends, at once, pairs of requests that
// cannot both stand (a CNAME and a TXT record on a new name; a CNAME and
// an address on one): exactly one of each pair wins, and the other is
// refused in MAAS's words with nothing stored.
func TestDNSConflictingCreatesRace(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		const rounds = 12
		for i := range rounds {
			name := fmt.Sprintf("race%d.maas", i)
			second := struct{ path string }{"dnsresourcerecords/"}
			form2 := url.Values{"fqdn": {name}, "rrtype": {"TXT"}, "rrdata": {"x"}}
			if i%2 == 1 {
				second.path, form2 = "dnsresources/", url.Values{"fqdn": {name}, "ip_addresses": {"192.0.2.9"}}
			}
			reqs := []struct {
				path string
				form url.Values
			}{{"dnsresourcerecords/", url.Values{"fqdn": {name}, "rrtype": {"CNAME"}, "rrdata": {"elsewhere"}}}, {second.path, form2}}
			codes := make([]int, 2)
			bodies := make([]string, 2)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for k, r := range reqs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					c, b := e.call("POST", r.path, e.admin, r.form)
					codes[k], bodies[k] = c, string(b)
				}()
			}
			close(start)
			wg.Wait()
			if (codes[0] == 200) == (codes[1] == 200) || codes[0]+codes[1] != 600 {
				t.Fatalf("%s: %d %s / %d %s; want one 200 and one 400", name, codes[0], bodies[0], codes[1], bodies[1])
			}
		}
		// What stands agrees: no name holds a CNAME beside anything else.
		var rs []struct {
			FQDN string `json:"fqdn"`
			IPs  []any  `json:"ip_addresses"`
			RRs  []struct {
				RRType string `json:"rrtype"`
			} `json:"resource_records"`
		}
		e.must(200, "GET", "dnsresources/", e.admin, nil, &rs)
		if len(rs) != rounds {
			t.Fatalf("%d names stand, want %d: %+v", len(rs), rounds, rs)
		}
		for _, r := range rs {
			if n := len(r.IPs) + len(r.RRs); n != 1 {
				t.Errorf("%s holds %d things: %+v", r.FQDN, n, r)
			}
		}

		// Updates are checked against what the name holds as they are
		// stored: addresses beside a CNAME, a TXT turned CNAME beside
		// another TXT.
		var cn struct {
			ID int64 `json:"id"`
		}
		e.must(200, "POST", "dnsresourcerecords/", e.admin, url.Values{"fqdn": {"put1.maas"}, "rrtype": {"CNAME"}, "rrdata": {"x"}}, nil)
		var res []struct {
			ID int64 `json:"id"`
		}
		e.must(200, "GET", "dnsresources/?name=put1", e.admin, nil, &res)
		if len(res) != 1 {
			t.Fatalf("put1: %+v", res)
		}
		e.must(200, "POST", "dnsresourcerecords/", e.admin, url.Values{"fqdn": {"put2.maas"}, "rrtype": {"TXT"}, "rrdata": {"a"}}, nil)
		e.must(200, "POST", "dnsresourcerecords/", e.admin, url.Values{"fqdn": {"put2.maas"}, "rrtype": {"TXT"}, "rrdata": {"b"}}, &cn)
		before := e.dnsCounts()
		for _, c := range []struct {
			path string
			form url.Values
			says string
		}{
			{"dnsresources/" + itoaT(res[0].ID) + "/", url.Values{"ip_addresses": {"192.0.2.7"}}, "CNAME"},
			{"dnsresourcerecords/" + itoaT(cn.ID) + "/", url.Values{"rrtype": {"CNAME"}, "rrdata": {"y"}}, "CNAME records for a name cannot coexist"},
		} {
			if code, body := e.call("PUT", c.path, e.admin, c.form); code != 400 || !strings.Contains(string(body), c.says) {
				t.Errorf("PUT %s %v: %d %s; want 400 %q", c.path, c.form, code, body, c.says)
			}
		}
		var rec apiRecord
		e.must(200, "GET", "dnsresourcerecords/"+itoaT(cn.ID)+"/", e.admin, nil, &rec)
		if after := e.dnsCounts(); after != before || rec.RRType != "TXT" {
			t.Fatalf("refused updates stored something: %v (was %v), record %+v", after, before, rec)
		}
	})
}
