package storetest

import (
	"testing"

	"github.com/anvilmetal/anvil/internal/store"
)

func testDNS(t *testing.T, s store.Store) {
	ctx := t.Context()
	ds, err := s.ListDomains(ctx)
	if err != nil || len(ds) != 1 || ds[0] != (store.Domain{ID: 0, Name: "maas", Authoritative: true, Default: true}) {
		t.Fatalf("ListDomains on a new store = %+v, %v; want the default maas domain, id 0", ds, err)
	}
	ttl := 300
	ex, err := s.CreateDomain(ctx, store.Domain{Name: "example.com", Authoritative: true, TTL: &ttl})
	if err != nil || ex.ID == 0 {
		t.Fatalf("CreateDomain = %+v, %v", ex, err)
	}
	_, err = s.CreateDomain(ctx, store.Domain{Name: "example.com"})
	wantConflict(t, err, "domain name example.com", "")

	r, err := s.CreateDNSResource(ctx, store.DNSResource{Name: "www", DomainID: ex.ID, IPs: []string{"192.0.2.1", "2001:db8::1"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateDNSResource(ctx, store.DNSResource{Name: "www", DomainID: ex.ID})
	wantConflict(t, err, "dnsresource name www", "")
	_, err = s.CreateDNSResource(ctx, store.DNSResource{Name: "x", DomainID: 999})
	wantErrIs(t, err, store.ErrNotFound)
	d, err := s.CreateDNSData(ctx, store.DNSData{ResourceID: r.ID, Type: "TXT", Data: "hello", TTL: &ttl})
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := s.ListDNSResources(ctx)
	dd, _ := s.ListDNSData(ctx)
	if len(rs) != 1 || len(rs[0].IPs) != 2 || len(dd) != 1 || dd[0].Data != "hello" || *dd[0].TTL != 300 {
		t.Fatalf("resources %+v, data %+v", rs, dd)
	}

	err = s.DeleteDomain(ctx, ex.ID)
	wantErrIs(t, err, store.ErrInUse)
	err = s.DeleteDomain(ctx, 0)
	wantErrIs(t, err, store.ErrInUse)
	if err := s.SetDefaultDomain(ctx, ex.ID); err != nil {
		t.Fatal(err)
	}
	ds, _ = s.ListDomains(ctx)
	if ds[0].Default || !ds[1].Default {
		t.Fatalf("after SetDefaultDomain: %+v", ds)
	}
	wantErrIs(t, s.SetDefaultDomain(ctx, 999), store.ErrNotFound)

	if err := s.DeleteDNSResource(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if dd, _ := s.ListDNSData(ctx); len(dd) != 0 {
		t.Fatalf("records outlived their resource: %+v", dd)
	}
	wantErrIs(t, s.DeleteDNSData(ctx, d.ID), store.ErrNotFound)
	if err := s.SetDefaultDomain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteDomain(ctx, ex.ID); err != nil {
		t.Fatal(err)
	}

	a, err := s.DNSSerial(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.DNSSerial(ctx, "one")
	c, _ := s.DNSSerial(ctx, "two")
	if a != b || c != a+1 {
		t.Fatalf("serials %d %d %d: want the same for the same content, the next for new content", a, b, c)
	}
}
