package storetest

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// testRackGrant: a secret's BMC networks become the rack's grant; a rack
// enrolling in an earlier one's place keeps that grant when its secret
// carries none; GrantRack changes each part alone, and refuses unknown
// racks. A rack serves its confirmed subnets and those of the VLANs it is
// primary or secondary rack of, and only addresses there count as its
// own; a rack that calls with an administrator's key is trusted.
func testRackGrant(t *testing.T, s store.Store) {
	ctx := context.Background()
	secret, err := s.CreateRackSecret(ctx, "admin", time.Now().Add(time.Hour), "192.0.2.0/24")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.EnrolRack(ctx, secret, store.Rack{Hostname: "granted", Address: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	rackOf := func(id string) store.Rack {
		t.Helper()
		rs, err := s.ListRacks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.SystemID == id {
				return r
			}
		}
		t.Fatalf("rack %s not listed", id)
		return store.Rack{}
	}
	if r := rackOf(c.RackID); strings.Join(r.BMCNetworks, ",") != "192.0.2.0/24" || len(r.Subnets) != 0 || len(r.Served) != 0 {
		t.Fatalf("enrolled: %+v", r)
	}
	if err := s.GrantRack(ctx, c.RackID, store.RackGrant{Subnets: []string{"198.18.0.0/24"}}); err != nil {
		t.Fatal(err)
	}
	if r := rackOf(c.RackID); strings.Join(r.BMCNetworks, ",") != "192.0.2.0/24" || strings.Join(r.Subnets, ",") != "198.18.0.0/24" {
		t.Fatalf("after confirming a subnet: %+v", r)
	}
	if err := s.GrantRack(ctx, "nosuch", store.RackGrant{BMCNetworks: []string{}}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("grant to an unknown rack: %v", err)
	}

	// Primary rack of a VLAN: it serves the VLAN's subnets too.
	vl, err := s.CreateVLAN(ctx, store.VLAN{FabricID: store.DefaultFabricID, VID: 301, Name: "grant", MTU: 1500, PrimaryRack: c.RackID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSubnet(ctx, store.Subnet{Name: "grant", CIDR: "198.51.100.0/24", VLANID: vl.ID, Managed: true}); err != nil {
		t.Fatal(err)
	}
	err = s.ReportRack(ctx, store.Rack{SystemID: c.RackID, Hostname: "granted", Address: "127.0.0.1", Enrolled: true,
		DNS:    []string{"198.51.100.53", "203.0.113.53"},
		Report: `{"interfaces":[{"name":"eth0","up":true,"addresses":["198.18.0.1/24","198.51.100.1/24","192.0.2.1/24"]}]}`})
	if err != nil {
		t.Fatal(err)
	}
	r := rackOf(c.RackID)
	want := []netip.Prefix{netip.MustParsePrefix("198.18.0.0/24"), netip.MustParsePrefix("198.51.100.0/24")}
	if !slices.Equal(r.Served, want) {
		t.Fatalf("served %v, want %v", r.Served, want)
	}
	if got := addrStrings(r.Addresses()); got != "198.18.0.1,198.51.100.1,198.51.100.53" {
		t.Fatalf("own addresses %s", got)
	}
	if got := addrStrings(r.DNSAddresses()); got != "198.51.100.53" {
		t.Fatalf("DNS addresses %s", got)
	}
	if held, err := s.RackAddresses(ctx); err != nil || held[netip.MustParseAddr("192.0.2.1")] || !held[netip.MustParseAddr("198.18.0.1")] {
		t.Fatalf("RackAddresses: %v %v", held, err)
	}

	// A rack taking its place keeps the grant, unless its secret has one.
	if err := s.TouchRack(ctx, store.Rack{SystemID: c.RackID, Hostname: "granted", Enrolled: true, Seen: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	again, _ := s.CreateRackSecret(ctx, "admin", time.Now().Add(time.Hour))
	c2, err := s.EnrolRack(ctx, again, store.Rack{Hostname: "granted"})
	if err != nil || c2.RackID != c.RackID {
		t.Fatalf("re-enrol: %+v %v", c2, err)
	}
	if r := rackOf(c.RackID); strings.Join(r.BMCNetworks, ",") != "192.0.2.0/24" {
		t.Fatalf("grant after re-enrolling without one: %+v", r.BMCNetworks)
	}
	if err := s.TouchRack(ctx, store.Rack{SystemID: c.RackID, Hostname: "granted", Enrolled: true, Seen: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	third, _ := s.CreateRackSecret(ctx, "admin", time.Now().Add(time.Hour), "198.51.100.0/25")
	if _, err := s.EnrolRack(ctx, third, store.Rack{Hostname: "granted"}); err != nil {
		t.Fatal(err)
	}
	if r := rackOf(c.RackID); strings.Join(r.BMCNetworks, ",") != "198.51.100.0/25" {
		t.Fatalf("grant after re-enrolling with one: %+v", r.BMCNetworks)
	}

	// A rack calling with an administrator's key is trusted as one.
	admin := store.Rack{SystemID: "with-key", Report: `{"interfaces":[{"addresses":["203.0.113.1/24"]}]}`}
	if got := addrStrings(admin.Addresses()); got != "203.0.113.1" {
		t.Fatalf("an administrator's rack's addresses: %s", got)
	}
}

func addrStrings(as []netip.Addr) string {
	var out []string
	for _, a := range as {
		out = append(out, a.String())
	}
	return strings.Join(out, ",")
}
