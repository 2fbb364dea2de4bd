package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/anvilmetal/anvil/internal/store"
)

func testSubnets(t *testing.T, s store.Store) {
	ctx := context.Background()
	sn, err := s.CreateSubnet(ctx, store.Subnet{Name: "lab", CIDR: "192.0.2.0/24", Gateway: "192.0.2.1", DNSServers: []string{"192.0.2.1", "192.0.2.2"}, DHCP: true, LeaseSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSubnet(ctx, store.Subnet{Name: "other", CIDR: "192.0.2.0/24"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate CIDR: %v", err)
	}
	r, err := s.CreateIPRange(ctx, store.IPRange{SubnetID: sn.ID, Type: "dynamic", Start: "192.0.2.100", End: "192.0.2.199"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateIPRange(ctx, store.IPRange{SubnetID: 9999, Type: "dynamic", Start: "1", End: "2"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("range of unknown subnet: %v", err)
	}
	got, err := s.GetSubnet(ctx, sn.ID)
	if err != nil || len(got.DNSServers) != 2 || !got.DHCP || got.LeaseSeconds != 600 {
		t.Fatalf("subnet reads %+v %v", got, err)
	}
	got.DHCP = false
	if _, err := s.UpdateSubnet(ctx, got); err != nil {
		t.Fatal(err)
	}
	rs, err := s.ListIPRanges(ctx)
	if err != nil || len(rs) != 1 || rs[0].ID != r.ID {
		t.Fatalf("ranges %+v %v", rs, err)
	}
	if err := s.DeleteSubnet(ctx, sn.ID); err != nil {
		t.Fatal(err)
	}
	if rs, _ := s.ListIPRanges(ctx); len(rs) != 0 {
		t.Fatalf("ranges outlived their subnet: %+v", rs)
	}
}

func testDiscoveries(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if err := s.NoteDiscovery(ctx, store.Discovery{MAC: "52:54:00:99:00:01", LastWhat: "tftp pxelinux.cfg/01-52-54-00-99-00-01"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.NoteDiscovery(ctx, store.Discovery{MAC: "52:54:00:99:00:01", IP: "192.0.2.120", LastWhat: "dhcp offer"}); err != nil {
		t.Fatal(err)
	}
	ds, err := s.ListDiscoveries(ctx)
	if err != nil || len(ds) != 1 || ds[0].Seen != 4 || ds[0].IP != "192.0.2.120" || ds[0].LastWhat != "dhcp offer" {
		t.Fatalf("discoveries %+v %v", ds, err)
	}
	// Once a machine has the MAC it is no discovery; its sighting is the
	// machine's address.
	if err := s.CreateMachine(ctx, newMachine("seen-1", "52:54:00:99:00:01"), nil); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.ListDiscoveries(ctx); err != nil || len(ds) != 0 {
		t.Fatalf("a machine's MAC is still a discovery: %+v %v", ds, err)
	}
	for _, macs := range [][]string{nil, {"52:54:00:99:00:01", "52:54:00:99:00:02"}} {
		ss, err := s.MachineSightings(ctx, macs)
		if err != nil || len(ss) != 1 || ss[0].MAC != "52:54:00:99:00:01" || ss[0].IP != "192.0.2.120" {
			t.Fatalf("machine sightings of %v: %+v %v", macs, ss, err)
		}
	}
	if ss, err := s.MachineSightings(ctx, []string{}); err != nil || len(ss) != 0 {
		t.Fatalf("sightings of no MACs: %+v %v", ss, err)
	}
	if err := s.DeleteDiscovery(ctx, "52:54:00:99:00:01"); err != nil {
		t.Fatal(err)
	}
}
