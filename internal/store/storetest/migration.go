package storetest

import (
	"testing"

	"github.com/anvilmetal/anvil/internal/store"
)

// NetworkMigrationSeed is what a database at migration 00019 holds before
// the network model: two subnets, a range, a machine with a NIC, given the
// database's literals for a machine's times and for true.
func NetworkMigrationSeed(now, yes string) []string {
	return []string{
		`INSERT INTO subnets (id, name, cidr, gateway, dns_servers, dhcp, lease_seconds) VALUES (7, 'lab', '192.0.2.0/24', '192.0.2.1', '192.0.2.53', ` + yes + `, 600)`,
		`INSERT INTO subnets (id, name, cidr) VALUES (9, 'other', '198.51.100.0/24')`,
		`INSERT INTO ipranges (id, subnet_id, type, start_ip, end_ip, comment) VALUES (3, 7, 'dynamic', '192.0.2.100', '192.0.2.199', 'pxe')`,
		`INSERT INTO machines (system_id, hostname, status, zone_id, pool_id, created, updated) VALUES ('abc', 'n1', 0, 1, 1, ` + now + `, ` + now + `)`,
		`INSERT INTO interfaces (id, machine_id, name, mac, boot) VALUES (5, (SELECT id FROM machines), 'eth0', '52:54:00:00:00:01', ` + yes + `)`,
	}
}

// CheckNetworkMigration checks a store migrated from NetworkMigrationSeed:
// the subnets on fabric-0's untagged VLAN with their ids and settings,
// the range, the NIC as a physical interface, the ids' sequences past
// the kept ids.
func CheckNetworkMigration(t *testing.T, s store.Store) {
	t.Helper()
	ctx := t.Context()
	untagged, err := s.GetVLANByVID(ctx, store.DefaultFabricID, 0)
	if err != nil {
		t.Fatal(err)
	}
	sn, err := s.GetSubnet(ctx, 7)
	if err != nil || sn.CIDR != "192.0.2.0/24" || sn.Gateway != "192.0.2.1" || !sn.DHCP || sn.LeaseSeconds != 600 ||
		len(sn.DNSServers) != 1 || sn.VLANID != untagged.ID || !sn.Managed || !sn.AllowDNS {
		t.Fatalf("migrated subnet %+v %v", sn, err)
	}
	rs, err := s.ListIPRanges(ctx)
	if err != nil || len(rs) != 1 || rs[0].ID != 3 || rs[0].SubnetID != 7 || rs[0].Comment != "pxe" {
		t.Fatalf("migrated ranges %+v %v", rs, err)
	}
	is, err := s.ListInterfaces(ctx, "abc")
	if err != nil || len(is) != 1 || is[0].ID != 5 || is[0].Type != "physical" || !is[0].Enabled || !is[0].Boot {
		t.Fatalf("migrated interfaces %+v %v", is, err)
	}
	if err := s.DeleteSubnet(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if rs, _ := s.ListIPRanges(ctx); len(rs) != 0 {
		t.Fatalf("ranges outlived their subnet after the migration: %+v", rs)
	}
	f, err := s.CreateFabric(ctx, store.Fabric{})
	if err != nil || f.Name != "fabric-1" {
		t.Fatalf("the first new fabric: %+v %v, want fabric-1", f, err)
	}
}
