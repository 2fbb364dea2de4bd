package api_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// TestCommissionPlacesNICs: commissioning puts the NIC the rack saw on
// the subnet's VLAN with a DHCP link there, and a NIC seen on no known
// subnet on a fabric of its own; recommissioning keeps the bond an
// administrator built.
func TestCommissionPlacesNICs(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := newNetFixture(t, e)
		prov, err := e.srv.Store.CreateSubnet(ctx, store.Subnet{Name: "prov", CIDR: "192.0.2.0/24", VLANID: f.untagged.ID, Managed: true, LeaseSeconds: 600})
		if err != nil {
			t.Fatal(err)
		}
		macs := []string{"52:54:00:16:02:01", "52:54:00:16:02:02"}
		m := e.addMachine("placed", macs[0], url.Values{"mac_addresses": macs})
		// The rack saw the boot NIC ask for an address on the provisioning
		// subnet.
		if err := e.srv.Store.NoteDiscovery(ctx, store.Discovery{MAC: macs[0], IP: "192.0.2.77", FirstSeen: time.Now(), LastSeen: time.Now(), LastWhat: "dhcp"}); err != nil {
			t.Fatal(err)
		}
		e.commission(m.SystemID, macs[0], 1, testInventory(macs...))
		is := e.ifaces(m.SystemID)
		boot, other := is["ens3"], is["ens4"]
		if boot.VLAN == nil || boot.VLAN.ID != f.untagged.ID || len(boot.Links) != 1 || boot.Links[0].Mode != "dhcp" ||
			boot.Links[0].Subnet == nil || boot.Links[0].Subnet.ID != prov.ID {
			t.Fatalf("boot NIC: %+v", boot)
		}
		if other.VLAN == nil || other.VLAN.ID == f.untagged.ID || other.VLAN.VID != 0 || len(other.Links) != 0 {
			t.Fatalf("unseen NIC: %+v", other)
		}
		vl, err := e.srv.Store.GetVLAN(ctx, other.VLAN.ID)
		if err != nil {
			t.Fatal(err)
		}
		fb, err := e.srv.Store.GetFabric(ctx, vl.FabricID)
		if err != nil || fb.Name != "fabric-"+itoa(fb.ID) {
			t.Fatalf("new fabric: %+v %v", fb, err)
		}
		// The operator bonds them (the boot NIC's DHCP link goes, as in
		// MAAS); recommissioning keeps the bond.
		base := "nodes/" + m.SystemID + "/interfaces/"
		e.must(http.StatusOK, http.MethodPut, base+id(other)+"/", e.admin, url.Values{"vlan": {itoa(f.untagged.ID)}}, nil)
		e.must(http.StatusOK, http.MethodPost, base, e.admin, url.Values{"op": {"create_bond"}, "name": {"bond0"}, "parents": {id(boot), id(other)}}, nil)
		if l := e.ifaces(m.SystemID)["ens3"].Links; len(l) != 0 {
			t.Fatalf("the bonded boot NIC kept its links: %+v", l)
		}
		e.commission(m.SystemID, macs[0], 2, testInventory(macs...))
		is = e.ifaces(m.SystemID)
		if b, ok := is["bond0"]; !ok || len(b.Parents) != 2 || len(is["ens3"].Links) != 0 || is["ens4"].VLAN.ID != f.untagged.ID {
			t.Fatalf("after recommissioning: %+v", is)
		}
	})
}
