package api_test

import (
	"strings"
	"testing"

	gmc "github.com/canonical/gomaasclient/client"
	"github.com/canonical/gomaasclient/entity"
)

// TestGomaasclientDNS drives domains and records with the client of
// terraform-provider-maas (maas_dns_domain, maas_dns_record) as its
// resources call it: every call succeeds and reads back what was set.
func TestGomaasclientDNS(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		c, err := gmc.GetClient(strings.TrimSuffix(e.base, "/"), e.admin, "2.0")
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.Domains.Create(&entity.DomainParams{Name: "tf.example", TTL: 600, Authoritative: true})
		if err != nil || d.Name != "tf.example" || d.TTL != 600 || !d.Authoritative {
			t.Fatalf("Domains.Create = %+v, %v", d, err)
		}
		if d, err = c.Domain.Update(d.ID, &entity.DomainParams{Name: "tf.example", TTL: 900, Authoritative: true}); err != nil || d.TTL != 900 {
			t.Fatalf("Domain.Update = %+v, %v", d, err)
		}
		if d, err = c.Domain.SetDefault(d.ID); err != nil || !d.IsDefault {
			t.Fatalf("Domain.SetDefault = %+v, %v", d, err)
		}
		if _, err := c.Domain.SetDefault(0); err != nil {
			t.Fatal(err)
		}
		res, err := c.DNSResources.Create(&entity.DNSResourceParams{FQDN: "web.tf.example", IPAddresses: "192.0.2.30 2001:db8::30", AddressTTL: 120})
		if err != nil || res.FQDN != "web.tf.example" || len(res.IPAddresses) != 2 || res.IPAddresses[0].IP.String() != "192.0.2.30" || res.AddressTTL != 120 {
			t.Fatalf("DNSResources.Create = %+v, %v", res, err)
		}
		rec, err := c.DNSResourceRecords.Create(&entity.DNSResourceRecordParams{Name: "mail", Domain: "tf.example", RRType: "MX", RRData: "10 web", TTL: 300})
		if err != nil || rec.FQDN != "mail.tf.example" || rec.RRType != "MX" || rec.TTL != 300 {
			t.Fatalf("DNSResourceRecords.Create = %+v, %v", rec, err)
		}
		if rec, err = c.DNSResourceRecord.Update(rec.ID, &entity.DNSResourceRecordParams{RRType: "MX", RRData: "20 web", TTL: 300}); err != nil || rec.RRData != "20 web" {
			t.Fatalf("DNSResourceRecord.Update = %+v, %v", rec, err)
		}
		recs, err := c.DNSResourceRecords.Get(&entity.DNSResourceRecordsParams{Domain: "tf.example"})
		if err != nil || len(recs) != 1 {
			t.Fatalf("DNSResourceRecords.Get = %+v, %v", recs, err)
		}
		if _, err := c.DNSResourceRecords.Create(&entity.DNSResourceRecordParams{FQDN: "web.tf.example", RRType: "CNAME", RRData: "elsewhere"}); err == nil ||
			!strings.Contains(err.Error(), "CNAME records for a name cannot coexist with non-CNAME records.") {
			t.Fatalf("a CNAME beside addresses: %v", err)
		}
		if err := c.DNSResourceRecord.Delete(rec.ID); err != nil {
			t.Fatal(err)
		}
		if err := c.DNSResource.Delete(res.ID); err != nil {
			t.Fatal(err)
		}
		if err := c.Domain.Delete(d.ID); err != nil {
			t.Fatal(err)
		}
		ds, err := c.Domains.Get()
		if err != nil || len(ds) != 1 || ds[0].Name != "maas" || !ds[0].IsDefault {
			t.Fatalf("Domains.Get after the deletes = %+v, %v", ds, err)
		}
	})
}
