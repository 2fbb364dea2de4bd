package api_test

import (
	"net/url"
	"strings"
	"testing"
)

type apiDomain struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	TTL           *int   `json:"ttl"`
	Authoritative bool   `json:"authoritative"`
	Count         int    `json:"resource_record_count"`
	IsDefault     bool   `json:"is_default"`
	ResourceURI   string `json:"resource_uri"`
}

type apiRecord struct {
	ID     int64  `json:"id"`
	FQDN   string `json:"fqdn"`
	TTL    *int   `json:"ttl"`
	RRType string `json:"rrtype"`
	RRData string `json:"rrdata"`
}

// TestDomainsAPI: domain 0 is "maas" from the first start, as machine JSON
// links to it; domains are created, changed, made default and deleted as
// in MAAS, and bad input is refused in MAAS's words.
func TestDomainsAPI(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		var d apiDomain
		e.must(200, "GET", "domains/0/", e.user, nil, &d)
		if d.Name != "maas" || !d.IsDefault || !d.Authoritative || d.TTL != nil || d.ResourceURI != "/MAAS/api/2.0/domains/0/" {
			t.Fatalf("domains/0/ = %+v", d)
		}
		e.must(200, "POST", "domains/", e.admin, url.Values{"name": {"Example.COM."}, "ttl": {"300"}}, &d)
		if d.Name != "example.com" || *d.TTL != 300 || !d.Authoritative || d.IsDefault {
			t.Fatalf("created %+v", d)
		}
		id := itoaT(d.ID)
		for _, c := range []struct {
			method, path string
			form         url.Values
			code         int
			says         string
		}{
			{"POST", "domains/", url.Values{}, 400, `{"name":["This field is required."]}`},
			{"POST", "domains/", url.Values{"name": {"example.com"}}, 400, "Domain with this Name already exists."},
			{"POST", "domains/", url.Values{"name": {"bad name"}}, 400, "Domain name contains invalid characters."},
			{"POST", "domains/", url.Values{"name": {"-x.org"}}, 400, "Invalid domain name: -x.org."},
			{"POST", "domains/", url.Values{"name": {"ok.org"}, "ttl": {"-1"}}, 400, "greater than or equal to 0"},
			{"POST", "domains/", url.Values{"name": {"ok.org"}, "ttl": {"2147483648"}}, 400, "less than or equal to 2147483647"},
			{"POST", "domains/", url.Values{"name": {"ok.org"}, "ttl": {"soon"}}, 400, "Enter a whole number."},
			{"PUT", "domains/" + id + "/", url.Values{"name": {"maas"}}, 400, "Domain with this Name already exists."},
			{"DELETE", "domains/0/", nil, 400, "This domain is the default domain, it cannot be deleted."},
			{"GET", "domains/99/", nil, 404, "No Domain matches the given query."},
		} {
			code, body := e.call(c.method, c.path, e.admin, c.form)
			if code != c.code || !strings.Contains(string(body), c.says) {
				t.Errorf("%s %s %v: %d %s; want %d %q", c.method, c.path, c.form, code, body, c.code, c.says)
			}
		}
		e.must(403, "POST", "domains/", e.user, url.Values{"name": {"mine.org"}}, nil)
		var ds []apiDomain
		e.must(200, "GET", "domains/", e.user, nil, &ds)
		if len(ds) != 2 {
			t.Fatalf("domains after bad input: %+v", ds)
		}
		e.must(200, "PUT", "domains/"+id+"/", e.admin, url.Values{"ttl": {""}, "authoritative": {"false"}}, &d)
		if d.TTL != nil || d.Authoritative {
			t.Fatalf("updated %+v", d)
		}
		e.must(200, "POST", "domains/"+id+"/?op=set_default", e.admin, nil, &d)
		e.must(200, "GET", "domains/0/", e.user, nil, &ds[0])
		if !d.IsDefault || ds[0].IsDefault {
			t.Fatalf("set_default: %+v, maas %+v", d, ds[0])
		}
		joins := e.addMachine("joins", "52:54:00:00:0d:01", nil)
		var got struct {
			FQDN string `json:"fqdn"`
		}
		if e.must(200, "GET", "machines/"+joins.SystemID+"/", e.admin, nil, &got); got.FQDN != "joins.example.com" {
			t.Errorf("a new machine with example.com the default: fqdn %s", got.FQDN)
		}
		e.must(200, "POST", "domains/0/?op=set_default", e.admin, nil, nil)
		if code, body := e.call("DELETE", "domains/"+id+"/", e.admin, nil); code != 400 || !strings.Contains(string(body), "still holds DNS resources or machines") {
			t.Errorf("delete a domain that holds a machine: %d %s", code, body)
		}
		e.must(204, "DELETE", "machines/"+joins.SystemID+"/", e.admin, nil, nil)
		e.must(204, "DELETE", "domains/"+id+"/", e.admin, nil, nil)
	})
}

// TestDNSRecordsAPI: records and resources with MAAS's validation: a
// CNAME stands alone, a machine's name keeps its addresses, labels and
// TTLs are checked, and a refused request stores nothing.
func TestDNSRecordsAPI(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.addMachine("node1", "52:54:00:00:00:01", nil)
		var rec apiRecord
		e.must(200, "POST", "dnsresourcerecords/", e.admin, url.Values{"fqdn": {"www.maas"}, "rrtype": {"cname"}, "rrdata": {"node1"}, "ttl": {"120"}}, &rec)
		if rec.FQDN != "www.maas" || rec.RRType != "CNAME" || *rec.TTL != 120 {
			t.Fatalf("record %+v", rec)
		}
		e.must(200, "POST", "dnsresourcerecords/", e.admin, url.Values{"name": {"@"}, "domain": {"0"}, "rrtype": {"MX"}, "rrdata": {"10 node1"}}, nil)
		e.must(200, "POST", "dnsresourcerecords/", e.admin, url.Values{"name": {"_ldap._tcp"}, "domain": {"maas"}, "rrtype": {"SRV"}, "rrdata": {"0 5 389 node1.maas."}}, nil)
		var res struct {
			ID   int64  `json:"id"`
			FQDN string `json:"fqdn"`
			IPs  []struct {
				IP string `json:"ip"`
			} `json:"ip_addresses"`
		}
		e.must(200, "POST", "dnsresources/", e.admin, url.Values{"fqdn": {"vip.maas"}, "ip_addresses": {"192.0.2.20 2001:db8::20"}, "address_ttl": {"45"}}, &res)
		if res.FQDN != "vip.maas" || len(res.IPs) != 2 {
			t.Fatalf("resource %+v", res)
		}
		before := e.dnsCounts()
		for _, c := range []struct {
			path string
			form url.Values
			says string
		}{
			{"dnsresourcerecords/", url.Values{"fqdn": {"www.maas"}, "rrtype": {"TXT"}, "rrdata": {"x"}}, "CNAME records for a name cannot coexist with non-CNAME records."},
			{"dnsresourcerecords/", url.Values{"fqdn": {"www.maas"}, "rrtype": {"CNAME"}, "rrdata": {"other"}}, "Only one CNAME can be associated with a name."},
			{"dnsresourcerecords/", url.Values{"fqdn": {"vip.maas"}, "rrtype": {"CNAME"}, "rrdata": {"other"}}, "CNAME records for a name cannot coexist"},
			{"dnsresourcerecords/", url.Values{"fqdn": {"node1.maas"}, "rrtype": {"CNAME"}, "rrdata": {"other"}}, "CNAME records for a name cannot coexist"},
			{"dnsresources/", url.Values{"fqdn": {"node1.maas"}, "ip_addresses": {"192.0.2.9"}}, "is the name of machine"},
			{"dnsresources/", url.Values{"fqdn": {"www.maas"}, "ip_addresses": {"192.0.2.9"}}, "Labels must be unique within their zone."},
			{"dnsresources/", url.Values{"fqdn": {"new.maas"}, "ip_addresses": {"not-an-ip"}}, "not-an-ip is not an IP address."},
			{"dnsresources/", url.Values{"name": {"bad_label"}, "domain": {"maas"}}, "Invalid dnsresource name: bad_label."},
			{"dnsresources/", url.Values{"name": {"x"}, "domain": {"nowhere"}}, "Select a valid choice."},
			{"dnsresourcerecords/", url.Values{"name": {"a.b"}, "domain": {"maas"}, "rrtype": {"TXT"}, "rrdata": {"x"}}, "Invalid dnsresource name: a.b."},
			{"dnsresourcerecords/", url.Values{"fqdn": {"m.maas"}, "rrtype": {"MX"}, "rrdata": {"99999 mail"}}, "Invalid MX"},
			{"dnsresourcerecords/", url.Values{"fqdn": {"m.maas"}, "rrtype": {"SRV"}, "rrdata": {"1 2 3"}}, "Invalid SRV"},
			{"dnsresourcerecords/", url.Values{"fqdn": {"m.maas"}, "rrtype": {"A"}, "rrdata": {"192.0.2.1"}}, "A is not one of CNAME MX NS SRV SSHFP TXT."},
			{"dnsresourcerecords/", url.Values{"fqdn": {"m.maas"}, "rrtype": {"TXT"}, "rrdata": {"x"}, "ttl": {"9999999999"}}, "less than or equal to 2147483647"},
			{"dnsresourcerecords/", url.Values{"fqdn": {"m.maas"}, "rrtype": {"TXT"}}, `{"rrdata":["This field is required."]}`},
		} {
			code, body := e.call("POST", c.path, e.admin, c.form)
			if code != 400 || !strings.Contains(string(body), c.says) {
				t.Errorf("POST %s %v: %d %s; want 400 %q", c.path, c.form, code, body, c.says)
			}
		}
		if after := e.dnsCounts(); after != before {
			t.Fatalf("refused requests stored something: %v, was %v", after, before)
		}
		var recs []apiRecord
		e.must(200, "GET", "dnsresourcerecords/?rrtype=MX", e.user, nil, &recs)
		if len(recs) != 1 || recs[0].FQDN != "maas" || recs[0].RRData != "10 node1" {
			t.Fatalf("MX records %+v", recs)
		}
		e.must(200, "PUT", "dnsresourcerecords/"+itoaT(rec.ID)+"/", e.admin, url.Values{"rrdata": {"node2"}}, &rec)
		if rec.RRData != "node2" {
			t.Fatalf("updated %+v", rec)
		}
		e.must(204, "DELETE", "dnsresourcerecords/"+itoaT(rec.ID)+"/", e.admin, nil, nil)
		e.must(404, "GET", "dnsresourcerecords/"+itoaT(rec.ID)+"/", e.admin, nil, nil)
		var rs []struct {
			FQDN string `json:"fqdn"`
		}
		e.must(200, "GET", "dnsresources/", e.admin, nil, &rs)
		for _, r := range rs {
			if r.FQDN == "www.maas" {
				t.Fatal("a name left with nothing outlived its last record")
			}
		}
		e.must(204, "DELETE", "dnsresources/"+itoaT(res.ID)+"/", e.admin, nil, nil)
	})
}

func (e *env) dnsCounts() [2]int {
	var rs, recs []any
	e.must(200, "GET", "dnsresources/", e.admin, nil, &rs)
	e.must(200, "GET", "dnsresourcerecords/", e.admin, nil, &recs)
	return [2]int{len(rs), len(recs)}
}

// TestDNSRecordsPerNameCap: one name holds at most 64 records and 64
// addresses; past that the API says so with a 400 and stores nothing.
func TestDNSRecordsPerNameCap(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		for i := range 64 {
			e.must(200, "POST", "dnsresourcerecords/", e.admin, url.Values{"fqdn": {"many.maas"}, "rrtype": {"TXT"}, "rrdata": {"text " + itoaT(int64(i))}}, nil)
		}
		before := e.dnsCounts()
		code, body := e.call("POST", "dnsresourcerecords/", e.admin, url.Values{"fqdn": {"many.maas"}, "rrtype": {"TXT"}, "rrdata": {"one more"}})
		if code != 400 || !strings.Contains(string(body), "at most 64 records") {
			t.Errorf("the 65th record on a name: %d %s; want 400", code, body)
		}
		var ips []string
		for i := range 65 {
			ips = append(ips, "198.51.100."+itoaT(int64(i+1)))
		}
		code, body = e.call("POST", "dnsresources/", e.admin, url.Values{"fqdn": {"wide.maas"}, "ip_addresses": {strings.Join(ips, " ")}})
		if code != 400 || !strings.Contains(string(body), "at most 64 addresses") {
			t.Errorf("65 addresses on a name: %d %s; want 400", code, body)
		}
		if after := e.dnsCounts(); after != before {
			t.Fatalf("refused requests stored something: %v, was %v", after, before)
		}
		e.must(200, "POST", "dnsresources/", e.admin, url.Values{"fqdn": {"wide.maas"}, "ip_addresses": {strings.Join(ips[:64], " ")}}, nil)
	})
}
