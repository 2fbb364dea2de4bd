package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// The DNS page lists domains, what the racks serve of one (a deployed
// machine's name included) and the records people added, and answers a
// name from the same zones.
func TestDNSPage(t *testing.T) { eachDB(t, testDNSPage, nil) }

func testDNSPage(t *testing.T, s *site) {
	c, csrf, id := s.asAda("dns-1", 3)
	// The machine is deployed and was seen with an address: the racks
	// name it.
	ctx := context.Background()
	if _, err := s.srv.Store.UpdateMachine(ctx, id, func(m *machine.Machine) ([]machine.Event, error) {
		m.Status = machine.Deployed
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.srv.Store.NoteDiscovery(ctx, store.Discovery{MAC: "52:54:00:bb:03:01", IP: "192.0.2.33", LastWhat: "dhcp ack 192.0.2.33"}); err != nil {
		t.Fatal(err)
	}
	body := s.mustDo(c, "POST", "/MAAS/api/2.0/dnsresourcerecords/", url.Values{"name": {"www"}, "domain": {"maas"}, "rrtype": {"CNAME"}, "rrdata": {"dns-1.maas."}}, csrf, http.StatusOK)
	mustContain(t, body, "www")
	body = s.mustDo(c, "POST", "/MAAS/api/2.0/dnsresourcerecords/", url.Values{"name": {"bad"}, "domain": {"maas"}, "rrtype": {"MX"}, "rrdata": {"not an mx"}}, csrf, http.StatusBadRequest)
	if !strings.Contains(body, "rrdata") {
		t.Fatalf("a bad MX was refused without naming rrdata: %s", body)
	}

	page := s.page(c, "/MAAS/dns")
	mustContain(t, page, `id="dns-domains"`, `href="/MAAS/dns?domain=maas"`, "Records of maas", "dns-1.maas.", "192.0.2.33", "www.maas.", "CNAME", `id="add-record"`, `data-api="DELETE dnsresourcerecords/`)

	// The lookup follows the CNAME to the machine's address, with TTLs.
	page = s.page(c, "/MAAS/dns?q=www.maas&type=A")
	mustContain(t, page, `id="dns-answer"`, "www.maas. A</strong>: NOERROR", "dns-1.maas.", "192.0.2.33")
	page = s.page(c, "/MAAS/dns?q=nope.maas&type=A")
	mustContain(t, page, "NXDOMAIN", "No such name in the zone.")
	page = s.page(c, "/MAAS/dns?q=example.com")
	mustContain(t, page, "REFUSED", "none of Anvil&#39;s zones")
	for _, q := range []string{"q=www.maas&type=BOGUS", "q=" + url.QueryEscape("bad name..x")} {
		if code, _, _ := s.do(c, "GET", "/MAAS/dns?"+q, nil, nil); code != http.StatusBadRequest {
			t.Fatalf("lookup %s: %d", q, code)
		}
	}
	if code, _, _ := s.do(c, "GET", "/MAAS/dns?domain=nosuch", nil, nil); code != http.StatusNotFound {
		t.Fatalf("an unknown domain: %d", code)
	}

	// A non-admin reads it all but gets no forms; the API refuses it.
	bob, bobCSRF := s.asBob()
	page = s.page(bob, "/MAAS/dns?q=www.maas&type=CNAME")
	mustContain(t, page, "www.maas.", "dns-1.maas.")
	mustLack(t, page, `id="add-record"`, `data-api="DELETE`)
	s.mustDo(bob, "POST", "/MAAS/api/2.0/dnsresourcerecords/", url.Values{"name": {"x"}, "domain": {"maas"}, "rrtype": {"TXT"}, "rrdata": {"hi"}}, bobCSRF, http.StatusForbidden)

	// The delete button's path is the record's: after it, the name is gone.
	del := regexp.MustCompile(`data-api="DELETE (dnsresourcerecords/\d+/)"`).FindStringSubmatch(s.page(c, "/MAAS/dns"))
	if del == nil {
		t.Fatal("no delete button for the CNAME")
	}
	s.mustDo(bob, "DELETE", "/MAAS/api/2.0/"+del[1], nil, bobCSRF, http.StatusForbidden)
	s.mustDo(c, "DELETE", "/MAAS/api/2.0/"+del[1], nil, csrf, http.StatusNoContent)
	mustLack(t, s.page(c, "/MAAS/dns"), "www.maas.")
	mustContain(t, s.page(c, "/MAAS/dns?q=www.maas&type=A"), "NXDOMAIN")
}
