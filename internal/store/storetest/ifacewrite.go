package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/anvilmetal/anvil/internal/store"
)

// ifaceState is what a failed write must leave as it was: the machine's
// interfaces with their links, its gateway choices and its version.
type ifaceState struct {
	ifaces  []store.Interface
	v4, v6  int64
	version int64
}

func stateOf(t *testing.T, s store.Store, systemID string) ifaceState {
	t.Helper()
	is, err := s.ListInterfaces(t.Context(), systemID)
	if err != nil {
		t.Fatal(err)
	}
	v4, v6, err := s.DefaultGatewayLinks(t.Context(), systemID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMachine(t.Context(), systemID)
	if err != nil {
		t.Fatal(err)
	}
	return ifaceState{is, v4, v6, m.Version}
}

// testWriteInterfacesAtomic: a write of several steps whose last step
// fails (a STATIC address another machine holds) leaves nothing of the
// steps before it; one that succeeds does all of them and bumps the
// machine's version once seen.
func testWriteInterfacesAtomic(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := create(t, s, newMachine("node1", mac(1), mac(2)))
	other := create(t, s, newMachine("node2", mac(3)))
	untagged, err := s.GetVLANByVID(ctx, store.DefaultFabricID, 0)
	if err != nil {
		t.Fatal(err)
	}
	v100, err := s.CreateVLAN(ctx, store.VLAN{FabricID: store.DefaultFabricID, VID: 100, Name: "v100"})
	if err != nil {
		t.Fatal(err)
	}
	sn, err := s.CreateSubnet(ctx, store.Subnet{Name: "a", CIDR: "192.0.2.0/24", Gateway: "192.0.2.1", VLANID: untagged.ID, Managed: true})
	if err != nil {
		t.Fatal(err)
	}
	eth0, eth1 := m.Interfaces[0].ID, m.Interfaces[1].ID
	for _, id := range []int64{eth0, eth1} {
		i, err := s.GetInterface(ctx, m.SystemID, id)
		if err != nil {
			t.Fatal(err)
		}
		i.VLANID = untagged.ID
		if _, err := s.UpdateInterface(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	link, err := s.CreateIPAddress(ctx, store.IPAddress{SubnetID: sn.ID, IP: "192.0.2.10", AllocType: store.AllocSticky, InterfaceID: eth0})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetDefaultGatewayLinks(ctx, m.SystemID, link.ID, 0); err != nil {
		t.Fatal(err)
	}
	held, err := s.CreateIPAddress(ctx, store.IPAddress{SubnetID: sn.ID, IP: "192.0.2.20", AllocType: store.AllocSticky,
		InterfaceID: other.Interfaces[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	before := stateOf(t, s, m.SystemID)

	eth0Moved := before.ifaces[0]
	eth0Moved.VLANID = v100.ID
	failing := []struct {
		name string
		w    store.InterfaceWrite
	}{
		{"link_subnet", store.InterfaceWrite{SystemID: m.SystemID, Updates: []store.Interface{eth0Moved}, DropLinks: []int64{link.ID},
			AddLink:  &store.IPAddress{SubnetID: sn.ID, IP: held.IP, AllocType: store.AllocSticky, InterfaceID: eth0},
			Gateways: &[2]int64{store.NewLink, 0}}},
		{"bond", store.InterfaceWrite{SystemID: m.SystemID,
			Create:    &store.Interface{Name: "bond0", Type: "bond", MAC: mac(1), VLANID: untagged.ID, Enabled: true, Parents: []int64{eth0, eth1}},
			DropLinks: []int64{link.ID},
			AddLink:   &store.IPAddress{SubnetID: sn.ID, IP: held.IP, AllocType: store.AllocSticky}}},
		{"delete then clash", store.InterfaceWrite{SystemID: m.SystemID, Deletes: []int64{eth1},
			AddLink: &store.IPAddress{SubnetID: sn.ID, IP: held.IP, AllocType: store.AllocSticky, InterfaceID: eth0}}},
		{"bad parent", store.InterfaceWrite{SystemID: m.SystemID, DropLinks: []int64{link.ID},
			Create: &store.Interface{Name: "br0", Type: "bridge", VLANID: untagged.ID, Parents: []int64{other.Interfaces[0].ID}}}},
	}
	for _, tc := range failing {
		w := tc.w
		err := s.WriteInterfaces(ctx, &w)
		if err == nil {
			t.Fatalf("%s: the write succeeded", tc.name)
		}
		if w.AddLink != nil && !errors.As(err, new(*store.ConflictError)) {
			t.Fatalf("%s: %v, want a conflict on the address", tc.name, err)
		}
		if after := stateOf(t, s, m.SystemID); !reflect.DeepEqual(after, before) {
			t.Fatalf("%s: a failed write changed the machine:\n%+v\nwas\n%+v", tc.name, after, before)
		}
	}

	// The same bond with a free address: all of it.
	w := failing[1].w
	w.AddLink = &store.IPAddress{SubnetID: sn.ID, IP: "192.0.2.30", AllocType: store.AllocSticky}
	w.Gateways = &[2]int64{link.ID, 0} // the dropped link: no one's gateway
	if err := s.WriteInterfaces(ctx, &w); err != nil {
		t.Fatal(err)
	}
	bond, err := s.GetInterface(ctx, m.SystemID, w.Create.ID)
	if err != nil || len(bond.Parents) != 2 || len(bond.Links) != 1 || bond.Links[0].ID != w.AddLink.ID || bond.Links[0].IP != "192.0.2.30" {
		t.Fatalf("bond: %+v %v", bond, err)
	}
	after := stateOf(t, s, m.SystemID)
	if len(after.ifaces) != 3 || len(after.ifaces[0].Links) != 0 || after.v4 != 0 || after.version <= before.version {
		t.Fatalf("after the bond: %+v", after)
	}
}

// testInterfaceWritesBumpVersion: every write that changes what a
// machine shows of its network bumps its version, which render caches
// check; writes to other machines do not.
func testInterfaceWritesBumpVersion(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := create(t, s, newMachine("node1", mac(1)))
	bystander := create(t, s, newMachine("node2", mac(2)))
	sn, err := s.CreateSubnet(ctx, store.Subnet{Name: "a", CIDR: "192.0.2.0/24", Managed: true})
	if err != nil {
		t.Fatal(err)
	}
	version := func(id string) int64 {
		got, err := s.GetMachine(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return got.Version
	}
	var link store.IPAddress
	var vlanIf store.Interface
	for _, step := range []struct {
		name  string
		write func() error
	}{
		{"CreateInterface", func() (err error) {
			vlanIf, err = s.CreateInterface(ctx, store.Interface{SystemID: m.SystemID, Name: "eth0.5", Type: "vlan", Parents: []int64{m.Interfaces[0].ID}})
			return err
		}},
		{"UpdateInterface", func() error { vlanIf.Tags = []string{"x"}; _, err := s.UpdateInterface(ctx, vlanIf); return err }},
		{"CreateIPAddress", func() (err error) {
			link, err = s.CreateIPAddress(ctx, store.IPAddress{SubnetID: sn.ID, AllocType: store.AllocAuto, InterfaceID: m.Interfaces[0].ID})
			return err
		}},
		{"AllocateIP", func() (err error) { link, err = s.AllocateIP(ctx, link); return err }},
		{"ReleaseAutoIPs", func() error { return s.ReleaseAutoIPs(ctx, m.SystemID) }},
		{"UpdateIPAddress", func() error {
			link.AllocType, link.IP = store.AllocSticky, "192.0.2.7"
			_, err := s.UpdateIPAddress(ctx, link)
			return err
		}},
		{"SetDefaultGatewayLinks", func() error { return s.SetDefaultGatewayLinks(ctx, m.SystemID, link.ID, 0) }},
		{"DeleteIPAddress", func() error { return s.DeleteIPAddress(ctx, link.ID) }},
		{"WriteInterfaces", func() error {
			return s.WriteInterfaces(ctx, &store.InterfaceWrite{SystemID: m.SystemID, Deletes: []int64{vlanIf.ID}})
		}},
	} {
		was, other := version(m.SystemID), version(bystander.SystemID)
		if err := step.write(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := version(m.SystemID); got <= was {
			t.Errorf("%s left the version at %d", step.name, got)
		}
		if got := version(bystander.SystemID); got != other {
			t.Errorf("%s bumped another machine's version", step.name)
		}
	}
}
