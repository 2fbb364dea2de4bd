package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// testNetworkDefaults: fabric-0 and its untagged VLAN exist from the
// start, and a subnet given no VLAN lands there.
func testNetworkDefaults(t *testing.T, s store.Store) {
	ctx := t.Context()
	f, err := s.GetFabric(ctx, store.DefaultFabricID)
	if err != nil || f.Name != "fabric-0" {
		t.Fatalf("default fabric %+v %v", f, err)
	}
	v, err := s.GetVLANByVID(ctx, f.ID, 0)
	if err != nil || v.Name != "untagged" || v.MTU != 1500 {
		t.Fatalf("untagged VLAN %+v %v", v, err)
	}
	sn, err := s.CreateSubnet(ctx, store.Subnet{Name: "a", CIDR: "192.0.2.0/24", Managed: true})
	if err != nil || sn.VLANID != v.ID {
		t.Fatalf("subnet %+v %v, want VLAN %d", sn, err, v.ID)
	}
	if _, err := s.CreateSubnet(ctx, store.Subnet{Name: "b", CIDR: "198.51.100.0/24", VLANID: 9999}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("subnet on an unknown VLAN: %v", err)
	}
}

// testFabricsVLANsSpaces: names and VIDs are unique, what is in use
// cannot be deleted, and deleting a space leaves its VLANs in none.
func testFabricsVLANsSpaces(t *testing.T, s store.Store) {
	ctx := t.Context()
	f, err := s.CreateFabric(ctx, store.Fabric{})
	if err != nil || f.Name != fmt.Sprintf("fabric-%d", f.ID) {
		t.Fatalf("unnamed fabric %+v %v", f, err)
	}
	if _, err := s.CreateFabric(ctx, store.Fabric{Name: f.Name}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate fabric name: %v", err)
	}
	untagged, err := s.GetVLANByVID(ctx, f.ID, 0)
	if err != nil {
		t.Fatalf("new fabric's untagged VLAN: %v", err)
	}
	sp, err := s.CreateSpace(ctx, store.Space{Name: "dmz"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.CreateVLAN(ctx, store.VLAN{FabricID: f.ID, VID: 100, Name: "storage", MTU: 9000, SpaceID: sp.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateVLAN(ctx, store.VLAN{FabricID: f.ID, VID: 100}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate VID: %v", err)
	}
	if _, err := s.CreateVLAN(ctx, store.VLAN{FabricID: 9999, VID: 5}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("VLAN on unknown fabric: %v", err)
	}
	sn, err := s.CreateSubnet(ctx, store.Subnet{Name: "st", CIDR: "198.51.100.0/24", VLANID: v.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteFabric(ctx, f.ID); !errors.Is(err, store.ErrInUse) {
		t.Fatalf("delete fabric with a subnet: %v", err)
	}
	if err := s.DeleteVLAN(ctx, untagged.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete the untagged VLAN: %v", err)
	}
	if err := s.DeleteSpace(ctx, sp.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetVLAN(ctx, v.ID); err != nil || got.SpaceID != 0 || got.MTU != 9000 {
		t.Fatalf("VLAN after its space went: %+v %v", got, err)
	}
	v2, err := s.CreateVLAN(ctx, store.VLAN{FabricID: f.ID, VID: 200})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSubnet(ctx, func() store.Subnet { sn.VLANID = v2.ID; return sn }()); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteVLAN(ctx, v2.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSubnet(ctx, sn.ID); err != nil || got.VLANID != untagged.ID {
		t.Fatalf("the subnet of a deleted VLAN: %+v %v, want on VLAN %d", got, err, untagged.ID)
	}
	if err := s.DeleteSubnet(ctx, sn.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteFabric(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetVLAN(ctx, untagged.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("VLAN outlived its fabric: %v", err)
	}
}

// testStaticRoutes: a route between two subnets, unique per gateway, gone
// with its subnet.
func testStaticRoutes(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, err := s.CreateSubnet(ctx, store.Subnet{Name: "a", CIDR: "192.0.2.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateSubnet(ctx, store.Subnet{Name: "b", CIDR: "198.51.100.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.CreateStaticRoute(ctx, store.StaticRoute{SourceID: a.ID, DestinationID: b.ID, GatewayIP: "192.0.2.254", Metric: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateStaticRoute(ctx, r); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate route: %v", err)
	}
	n, err := s.LoadNetwork(ctx)
	if err != nil || len(n.Routes) != 1 || n.Routes[0].Destination.String() != "198.51.100.0/24" || n.Routes[0].Metric != 10 {
		t.Fatalf("loaded routes %+v %v", n, err)
	}
	if err := s.DeleteSubnet(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetStaticRoute(ctx, r.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("route outlived its destination: %v", err)
	}
}

// testInterfacesAndLinks: a bond over two NICs with an AUTO link survives
// the machine's own interface updates; allocation, release and the loaded
// model agree.
func testInterfacesAndLinks(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := create(t, s, newMachine("node1", mac(1), mac(2)))
	untagged, err := s.GetVLANByVID(ctx, store.DefaultFabricID, 0)
	if err != nil {
		t.Fatal(err)
	}
	sn, err := s.CreateSubnet(ctx, store.Subnet{Name: "a", CIDR: "192.0.2.0/29", Gateway: "192.0.2.1", Managed: true})
	if err != nil {
		t.Fatal(err)
	}
	bond, err := s.CreateInterface(ctx, store.Interface{SystemID: m.SystemID, Name: "bond0", Type: "bond", MAC: mac(1),
		VLANID: untagged.ID, Enabled: true, Parents: []int64{m.Interfaces[0].ID, m.Interfaces[1].ID},
		Params: store.InterfaceParams{BondMode: "active-backup", BondMIIMon: 100, MTU: 9000}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateInterface(ctx, store.Interface{SystemID: m.SystemID, Name: "bond0", Type: "bond"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate interface name: %v", err)
	}
	if _, err := s.CreateInterface(ctx, store.Interface{SystemID: m.SystemID, Name: "x", Type: "physical", MAC: mac(2)}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second physical interface with one MAC: %v", err)
	}
	link, err := s.CreateIPAddress(ctx, store.IPAddress{SubnetID: sn.ID, AllocType: store.AllocAuto, InterfaceID: bond.ID})
	if err != nil {
		t.Fatal(err)
	}
	// The machine's own update (commissioning renames a NIC, adds one)
	// keeps the bond's parents and link.
	if _, err := s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.Interfaces[0].Name = "ens3"
		m.Interfaces = append(m.Interfaces, machine.Interface{Name: "ens5", MAC: mac(3)})
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMachine(ctx, m.SystemID)
	if err != nil || len(got.Interfaces) != 3 {
		t.Fatalf("machine's interfaces are its physical ones: %+v %v", got.Interfaces, err)
	}
	a, err := s.AllocateIP(ctx, link)
	if err != nil || a.IP != "192.0.2.2" {
		t.Fatalf("allocated %+v %v, want 192.0.2.2 (the gateway is held)", a, err)
	}
	if _, err := s.CreateIPAddress(ctx, store.IPAddress{SubnetID: sn.ID, IP: "192.0.2.2", AllocType: store.AllocUserReserved, Owner: "alice"}); !errors.As(err, new(*store.ConflictError)) {
		t.Fatalf("reserving an allocated address: %v", err)
	}
	n, nm, err := s.MachineNetwork(ctx, m.SystemID)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := nm.Interface(int(bond.ID))
	if !ok || len(b.Parents) != 2 || len(b.Links) != 1 || b.Links[0].IP.String() != "192.0.2.2" || b.Bond.Mode != "active-backup" || b.MTU != 9000 {
		t.Fatalf("bond as loaded: %+v", b)
	}
	if len(n.Subnets) != 1 || len(nm.Interfaces) != 4 {
		t.Fatalf("network %+v machine %+v", n, nm)
	}
	if err := s.ReleaseAutoIPs(ctx, m.SystemID); err != nil {
		t.Fatal(err)
	}
	bi, err := s.GetInterface(ctx, m.SystemID, bond.ID)
	if err != nil || len(bi.Links) != 1 || bi.Links[0].IP != "" || bi.Links[0].Node != (store.IPNode{SystemID: m.SystemID, Hostname: "node1", Interface: "bond0"}) {
		t.Fatalf("after release the link stays without its address: %+v %v", bi, err)
	}
	if err := s.DeleteSubnet(ctx, sn.ID); !errors.Is(err, store.ErrInUse) {
		t.Fatalf("delete subnet with a link: %v", err)
	}
	// A link turned STATIC, to an address another row holds, is refused.
	held, err := s.CreateIPAddress(ctx, store.IPAddress{SubnetID: sn.ID, IP: "192.0.2.6", AllocType: store.AllocUserReserved, Owner: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	bi.Links[0].AllocType, bi.Links[0].IP = store.AllocSticky, held.IP
	if _, err := s.UpdateIPAddress(ctx, bi.Links[0]); !errors.As(err, new(*store.ConflictError)) {
		t.Fatalf("a link onto a held address: %v", err)
	}
	bi.Links[0].IP = "192.0.2.5"
	if got, err := s.UpdateIPAddress(ctx, bi.Links[0]); err != nil || got.IP != "192.0.2.5" {
		t.Fatalf("a link made STATIC: %+v %v", got, err)
	}
	if err := s.DeleteInterface(ctx, m.SystemID, bond.ID); err != nil {
		t.Fatal(err)
	}
	if as, err := s.ListIPAddresses(ctx, store.IPAddressFilter{SubnetID: sn.ID}); err != nil || len(as) != 1 || as[0].ID != held.ID {
		t.Fatalf("links outlived their interface: %+v %v", as, err)
	}
}

// testAllocateConcurrent: allocations at once never hand out one address
// twice, and a full subnet says so.
func testAllocateConcurrent(t *testing.T, s store.Store) {
	ctx := t.Context()
	sn, err := s.CreateSubnet(ctx, store.Subnet{Name: "a", CIDR: "192.0.2.0/26", Managed: true})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 16 // 64 tries for the 62 host addresses
	var mu sync.Mutex
	seen := map[string]bool{}
	full := 0
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				a, err := s.AllocateIP(ctx, store.IPAddress{SubnetID: sn.ID, AllocType: store.AllocUserReserved, Owner: fmt.Sprint(w)})
				mu.Lock()
				switch {
				case err != nil:
					full++
				case seen[a.IP]:
					t.Errorf("%s handed out twice", a.IP)
				default:
					seen[a.IP] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 62 || full != 2 {
		t.Fatalf("%d addresses handed out, %d refusals; want 62 and 2", len(seen), full)
	}
}
