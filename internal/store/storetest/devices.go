package storetest

import (
	"errors"
	"testing"

	"github.com/anvilmetal/anvil/internal/store"
)

// testDevices: devices share the nodes' table but never read as
// machines; their hostnames and MACs clash with machines'; a parent's
// deletion or DeleteChildDevices takes them with their addresses.
func testDevices(t *testing.T, s store.Store) {
	ctx := t.Context()
	host := create(t, s, newMachine("host1", mac(1)))
	host2 := create(t, s, newMachine("host2", mac(2)))

	d := store.Device{Hostname: "dev1", Owner: "alice", Parent: host.SystemID, Description: "lxd", OwnerData: map[string]string{"k": "v"}}
	if err := s.CreateDevice(ctx, &d, []string{mac(10), mac(11)}); err != nil {
		t.Fatal(err)
	}
	if d.SystemID == "" || len(d.Interfaces) != 2 || d.Interfaces[1].Name != "eth1" || d.Zone != "default" {
		t.Fatalf("created %+v", d)
	}
	got, err := s.GetDevice(ctx, d.SystemID)
	if err != nil || got.Parent != host.SystemID || got.Owner != "alice" || got.OwnerData["k"] != "v" || len(got.Interfaces) != 2 {
		t.Fatalf("get %+v %v", got, err)
	}
	// Not a machine, and no machine list or count sees it.
	if _, err := s.GetMachine(ctx, d.SystemID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("device read as a machine: %v", err)
	}
	if err := s.DeleteMachine(ctx, d.SystemID, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("device deleted as a machine: %v", err)
	}
	if countMachines(t, s) != 2 || len(list(t, s, store.MachineFilter{})) != 2 {
		t.Fatal("machines count or list a device")
	}
	// A machine is not a device.
	if _, err := s.GetDevice(ctx, host.SystemID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("machine read as a device: %v", err)
	}

	// Clashes with machines and other devices, nothing stored.
	var ce *store.ConflictError
	for _, c := range []struct {
		d    store.Device
		macs []string
	}{
		{store.Device{Hostname: "host1"}, []string{mac(20)}},
		{store.Device{Hostname: "dev2"}, []string{mac(1)}},
		{store.Device{Hostname: "dev2"}, []string{mac(11)}},
		{store.Device{Hostname: "dev1"}, []string{mac(21)}},
	} {
		if err := s.CreateDevice(ctx, &c.d, c.macs); !errors.As(err, &ce) {
			t.Errorf("%+v %v: %v, want a conflict", c.d, c.macs, err)
		}
	}
	if err := s.CreateDevice(ctx, &store.Device{Hostname: "dev3", Parent: "nosuch"}, []string{mac(22)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown parent: %v", err)
	}
	if err := s.CreateDevice(ctx, &store.Device{Hostname: "dev3", Parent: d.SystemID}, []string{mac(22)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("device as parent: %v", err)
	}
	if ds, _ := s.ListDevices(ctx, store.DeviceFilter{}); len(ds) != 1 {
		t.Fatalf("refused devices stored: %+v", ds)
	}
	// A machine cannot take a device's MAC or hostname either.
	m := newMachine("dev1", mac(30))
	if err := s.CreateMachine(ctx, m, nil); !errors.As(err, &ce) {
		t.Errorf("machine took a device's hostname: %v", err)
	}
	m = newMachine("host3", mac(10))
	if err := s.CreateMachine(ctx, m, nil); !errors.As(err, &ce) {
		t.Errorf("machine took a device's MAC: %v", err)
	}

	// Update, and filters.
	got.Hostname, got.Parent, got.Zone, got.Domain = "dev1b", host2.SystemID, "default", "lab"
	if err := s.UpdateDevice(ctx, got); err != nil {
		t.Fatal(err)
	}
	two := store.Device{Hostname: "dev2", Owner: "bob"}
	if err := s.CreateDevice(ctx, &two, []string{mac(12)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    store.DeviceFilter
		want int
	}{
		{store.DeviceFilter{}, 2},
		{store.DeviceFilter{Hostnames: []string{"dev1b"}}, 1},
		{store.DeviceFilter{MACs: []string{mac(12)}}, 1},
		{store.DeviceFilter{Domains: []string{"lab"}}, 1},
		{store.DeviceFilter{Parents: []string{host2.SystemID}}, 1},
		{store.DeviceFilter{Owners: []string{"bob"}}, 1},
		{store.DeviceFilter{VisibleTo: "bob"}, 1},
		{store.DeviceFilter{Zones: []string{"elsewhere"}}, 0},
	} {
		if ds, err := s.ListDevices(ctx, c.f); err != nil || len(ds) != c.want {
			t.Errorf("%+v: %d devices %v, want %d", c.f, len(ds), err, c.want)
		}
	}

	// An address on a device's interface goes with the device's parent.
	sn, err := s.CreateSubnet(ctx, store.Subnet{Name: "n1", CIDR: "192.0.2.0/24", Managed: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AllocateIP(ctx, store.IPAddress{SubnetID: sn.ID, AllocType: store.AllocAuto, InterfaceID: got.Interfaces[0].ID}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMachine(ctx, host2.SystemID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetDevice(ctx, got.SystemID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the parent's deletion left its device: %v", err)
	}
	if as, _ := s.ListIPAddresses(ctx, store.IPAddressFilter{SubnetID: sn.ID}); len(as) != 0 {
		t.Fatalf("the device's address outlived it: %+v", as)
	}
	// DeleteChildDevices takes a machine's devices only.
	child := store.Device{Hostname: "dev4", Parent: host.SystemID}
	if err := s.CreateDevice(ctx, &child, []string{mac(13)}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteChildDevices(ctx, host.SystemID); err != nil || n != 1 {
		t.Fatalf("DeleteChildDevices: %d %v", n, err)
	}
	if ds, _ := s.ListDevices(ctx, store.DeviceFilter{}); len(ds) != 1 || ds[0].Hostname != "dev2" {
		t.Fatalf("left %+v", ds)
	}
	if err := s.DeleteDevice(ctx, two.SystemID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteDevice(ctx, two.SystemID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := s.GetMachine(ctx, host.SystemID); err != nil {
		t.Fatalf("the parent went with its devices: %v", err)
	}
}
