package storetest

import (
	"database/sql"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/anvilmetal/anvil/internal/machine"
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

// DeviceMigrationSeed is a machine with a NIC in a database at migration
// 00024, for CheckDeviceMigration.
func DeviceMigrationSeed(now, yes string) []string {
	return []string{
		`INSERT INTO machines (system_id, hostname, status, owner, zone_id, pool_id, created, updated) VALUES ('def', 'n2', 6, 'alice', 1, 1, ` + now + `, ` + now + `)`,
		`INSERT INTO interfaces (machine_id, name, mac, boot) VALUES ((SELECT id FROM machines), 'eth0', '52:54:00:00:00:02', ` + yes + `)`,
	}
}

// CheckDeviceMigration checks a store migrated from DeviceMigrationSeed
// through 00025: the machine is still one, with its NIC, and can now
// parent a device.
func CheckDeviceMigration(t *testing.T, s store.Store) {
	t.Helper()
	ctx := t.Context()
	m, err := s.GetMachine(ctx, "def")
	if err != nil || m.Hostname != "n2" || m.Owner != "alice" || len(m.Interfaces) != 1 || m.Interfaces[0].MAC != "52:54:00:00:00:02" {
		t.Fatalf("migrated machine %+v %v", m, err)
	}
	if n, err := s.CountMachines(ctx); err != nil || n != 1 {
		t.Fatalf("machines after the migration: %d %v", n, err)
	}
	if ds, err := s.ListDevices(ctx, store.DeviceFilter{}); err != nil || len(ds) != 0 {
		t.Fatalf("devices after the migration: %+v %v", ds, err)
	}
	d := store.Device{Hostname: "c1", Owner: "bob", Parent: "def"}
	if err := s.CreateDevice(ctx, &d, []string{"52:54:00:00:00:03"}); err != nil || d.ParentOwner != "alice" {
		t.Fatalf("device of a migrated machine: %+v %v", d, err)
	}
}

// Seed brings db to migration at with p, runs seed there and, with
// through set, migrates up to through and back down to at: a migration
// test then opens the store, which migrates up to the latest.
func Seed(t *testing.T, db *sql.DB, p *goose.Provider, at, through int64, seed []string) {
	t.Helper()
	if _, err := p.UpTo(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	for _, q := range seed {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if through == 0 {
		return
	}
	if _, err := p.UpTo(t.Context(), through); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(t.Context(), at); err != nil {
		t.Fatal(err)
	}
}

// StorageUUIDMigrationSeed is a commissioned machine in a database at
// migration 00036: a storage configuration whose objects have no UUIDs
// but its root filesystem's (one a deploy gave it), and a script summary
// without set ids, with two commissioning sets and a testing set.
func StorageUUIDMigrationSeed(now string) []string {
	sc := `{"layout":"flat","boot_disk":"sda","disks":[{"id":1,"name":"sda","size":8589934592,"block_size":512,"numa_node":0}],` +
		`"partition_tables":[{"disk":"sda","type":"GPT","partitions":[{"id":2,"number":1,"offset":4194304,"size":536870912,"bootable":true,"type":"esp"},` +
		`{"id":3,"number":2,"offset":541065216,"size":8000000000}]}],` +
		`"filesystems":[{"device":"sda-part1","fstype":"fat32","label":"efi","mount_point":"/boot/efi"},` +
		`{"device":"sda-part2","fstype":"ext4","label":"root","uuid":"0b7c4c8e-0000-4000-8000-000000000001","mount_point":"/"},` +
		`{"fstype":"tmpfs","mount_point":"/tmp"}],"next_id":4}`
	sum := `{"known":true,"commissioning":2,"testing":2,"cpu":2,"memory":-1,"storage":-1,"network":-1,"interface":-1,"other":-1}`
	return []string{
		`INSERT INTO machines (system_id, hostname, status, zone_id, pool_id, created, updated, storage_config, script_status) VALUES ('jkl', 'n3', 4, 1, 1, ` +
			now + `, ` + now + `, '` + sc + `', '` + sum + `')`,
		`INSERT INTO machines (system_id, hostname, status, zone_id, pool_id, created, updated) VALUES ('mno', 'n4', 0, 1, 1, ` + now + `, ` + now + `)`,
		`INSERT INTO script_sets (id, system_id, result_type, created) VALUES (4, 'jkl', 0, ` + now + `), (6, 'jkl', 2, ` + now + `), (9, 'jkl', 0, ` + now + `)`,
	}
}

// CheckStorageUUIDMigration checks a store migrated from
// StorageUUIDMigrationSeed: every storage object has a UUID of its own,
// the root filesystem keeps its, and the summary names the newest sets;
// the machine without either is as it was.
func CheckStorageUUIDMigration(t *testing.T, s store.Store) {
	t.Helper()
	m, err := s.GetMachine(t.Context(), "jkl")
	if err != nil || m.StorageConfig == nil {
		t.Fatalf("migrated machine %+v %v", m, err)
	}
	c := *m.StorageConfig
	if c.MissingUUIDs() {
		t.Fatalf("objects without UUIDs after the migration: %+v", c)
	}
	seen := map[string]bool{}
	for _, p := range c.Tables[0].Partitions {
		seen[p.UUID] = true
	}
	for _, f := range c.Filesystems {
		seen[f.UUID] = true
	}
	if len(seen) != 5 {
		t.Fatalf("%d distinct UUIDs for 2 partitions and 3 filesystems: %+v", len(seen), c)
	}
	if root, _ := c.FilesystemAt("/"); root.UUID != "0b7c4c8e-0000-4000-8000-000000000001" {
		t.Fatalf("the root filesystem's UUID changed to %q", root.UUID)
	}
	if esp, _ := c.FilesystemAt("/boot/efi"); len(esp.UUID) != 9 || esp.UUID[4] != '-' {
		t.Fatalf("the ESP's volume id %q is not FAT's XXXX-XXXX", esp.UUID)
	}
	if m.Scripts.CommissioningSet != 9 || m.Scripts.TestingSet != 6 || m.Scripts.Commissioning != machine.ScriptPassed || m.Scripts.CPU != machine.ScriptPassed {
		t.Fatalf("migrated script summary %+v", m.Scripts)
	}
	other, err := s.GetMachine(t.Context(), "mno")
	if err != nil || other.StorageConfig != nil || other.Scripts.Known {
		t.Fatalf("machine without storage or scripts after the migration: %+v %v", other, err)
	}
}
