package api_test

import (
	"net/url"
	"strings"
	"testing"

	gmc "github.com/canonical/gomaasclient/client"
	"github.com/canonical/gomaasclient/entity"
)

// TestGomaasclientInterfaces drives the interface calls of
// terraform-provider-maas's client: the network interface resources
// (physical, bond, bridge, VLAN, link) as it makes them.
func TestGomaasclientInterfaces(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		f := newNetFixture(t, e)
		c, err := gmc.GetClient(strings.TrimSuffix(e.base, "/"), e.admin, "2.0")
		if err != nil {
			t.Fatal(err)
		}
		m := e.addMachine("tf-net", "52:54:00:16:04:01", url.Values{"mac_addresses": {"52:54:00:16:04:01", "52:54:00:16:04:02"}})
		sid := m.SystemID
		nics, err := c.NetworkInterfaces.Get(sid)
		if err != nil || len(nics) != 2 {
			t.Fatalf("Get: %+v %v", nics, err)
		}
		untagged := int(f.untagged.ID)
		for _, n := range nics {
			if _, err := c.NetworkInterface.Update(sid, n.ID, &entity.NetworkInterfaceUpdateParams{VLAN: untagged}); err != nil {
				t.Fatalf("Update: %v", err)
			}
		}
		phys, err := c.NetworkInterfaces.CreatePhysical(sid, &entity.NetworkInterfacePhysicalParams{MACAddress: "52:54:00:16:04:03", Name: "eth9", VLAN: untagged, MTU: 9000})
		if err != nil || phys.Name != "eth9" || phys.EffectiveMTU != 9000 {
			t.Fatalf("CreatePhysical: %+v %v", phys, err)
		}
		bond, err := c.NetworkInterfaces.CreateBond(sid, &entity.NetworkInterfaceBondParams{Name: "bond0", Parents: []int{nics[0].ID, nics[1].ID},
			BondMode: "active-backup", BondMiimon: 200})
		if err != nil || bond.Type != "bond" || len(bond.Parents) != 2 || bond.VLAN.ID != untagged {
			t.Fatalf("CreateBond: %+v %v", bond, err)
		}
		br, err := c.NetworkInterfaces.CreateBridge(sid, &entity.NetworkInterfaceBridgeParams{Name: "br0", Parents: []int{phys.ID}, BridgeSTP: true, BridgeFD: 4})
		if err != nil || br.Type != "bridge" || len(br.Parents) != 1 {
			t.Fatalf("CreateBridge: %+v %v", br, err)
		}
		vl, err := c.NetworkInterfaces.CreateVLAN(sid, &entity.NetworkInterfaceVLANParams{VLAN: int(f.vlan100.ID), Parents: []int{bond.ID}})
		if err != nil || vl.Name != "bond0.100" || vl.VLAN.VID != 100 {
			t.Fatalf("CreateVLAN: %+v %v", vl, err)
		}
		linked, err := c.NetworkInterface.LinkSubnet(sid, vl.ID, &entity.NetworkInterfaceLinkParams{Mode: "AUTO", Subnet: int(f.subnet.ID), DefaultGateway: true})
		if err != nil || len(linked.Links) != 1 || linked.Links[0].Mode != "auto" || linked.Links[0].Subnet.ID != int(f.subnet.ID) {
			t.Fatalf("LinkSubnet: %+v %v", linked, err)
		}
		if _, err := c.NetworkInterface.SetDefaultGateway(sid, vl.ID, linked.Links[0].ID); err != nil {
			t.Fatalf("SetDefaultGateway: %v", err)
		}
		if got, err := c.NetworkInterface.AddTag(sid, vl.ID, "tf"); err != nil || len(got.Tags) != 1 {
			t.Fatalf("AddTag: %+v %v", got, err)
		}
		if got, err := c.NetworkInterface.UnlinkSubnet(sid, vl.ID, linked.Links[0].ID); err != nil || len(got.Links) != 0 {
			t.Fatalf("UnlinkSubnet: %+v %v", got, err)
		}
		if got, err := c.NetworkInterface.Disconnect(sid, phys.ID); err != nil || got.VLAN.ID != 0 {
			t.Fatalf("Disconnect: %+v %v", got, err)
		}
		if err := c.NetworkInterface.Delete(sid, br.ID); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if got, err := c.NetworkInterface.Get(sid, bond.ID); err != nil || got.Name != "bond0" {
			t.Fatalf("Get one: %+v %v", got, err)
		}
	})
}
