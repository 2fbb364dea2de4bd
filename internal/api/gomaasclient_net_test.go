package api_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	gmc "github.com/canonical/gomaasclient/client"
	"github.com/canonical/gomaasclient/entity"
)

// TestGomaasclientNetwork drives the network calls of gomaasclient as
// terraform-provider-maas's maas_space, maas_fabric, maas_vlan,
// maas_subnet (fabric id, VLAN id and vid, as the provider sends them),
// maas_subnet_ip_range and static routes make them, and ipaddresses/.
func TestGomaasclientNetwork(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		c, err := gmc.GetClient(strings.TrimSuffix(e.base, "/"), e.admin, "2.0")
		if err != nil {
			t.Fatal(err)
		}
		var vlan *entity.VLAN
		var fabricID, spaceID, subnetID, subnet2ID, rangeID, routeID int
		calls := []struct {
			name string
			call func() error
		}{
			{"Spaces.Create", func() error {
				s, err := c.Spaces.Create("tf-space")
				spaceID = s.ID
				return err
			}},
			{"Fabrics.Create", func() error {
				f, err := c.Fabrics.Create(&entity.FabricParams{Name: "tf-fabric"})
				if err == nil && (len(f.VLANs) != 1 || f.VLANs[0].VID != 0) {
					err = fmt.Errorf("fabric %+v", f)
				}
				fabricID = f.ID
				return err
			}},
			{"Fabric.Update", func() error {
				f, err := c.Fabric.Update(fabricID, &entity.FabricParams{Name: "tf-fabric", ClassType: "10g"})
				if err == nil && f.ClassType != "10g" {
					err = fmt.Errorf("fabric %+v", f)
				}
				return err
			}},
			{"VLANs.Create", func() error {
				v, err := c.VLANs.Create(fabricID, &entity.VLANParams{VID: 14, Name: "tf-vlan14", Space: "tf-space"})
				if err == nil && (v.VID != 14 || v.Space != "tf-space" || v.FabricID != fabricID || v.MTU != 1500) {
					err = fmt.Errorf("vlan %+v", v)
				}
				vlan = v
				return err
			}},
			{"VLAN.Get", func() error {
				v, err := c.VLAN.Get(fabricID, 14)
				if err == nil && v.ID != vlan.ID {
					err = fmt.Errorf("vlan %+v", v)
				}
				return err
			}},
			{"VLAN.Update", func() error {
				v, err := c.VLAN.Update(fabricID, 14, &entity.VLANParams{VID: 14, Name: "tf-vlan14", MTU: 9000, Space: "tf-space"})
				if err == nil && v.MTU != 9000 {
					err = fmt.Errorf("vlan %+v", v)
				}
				return err
			}},
			{"VLANs.Get", func() error {
				vs, err := c.VLANs.Get(fabricID)
				if err == nil && len(vs) != 2 {
					err = fmt.Errorf("vlans %+v", vs)
				}
				return err
			}},
			{"Subnets.Create", func() error {
				s, err := c.Subnets.Create(&entity.SubnetParams{CIDR: "198.51.100.0/24", Name: "tf_subnet", GatewayIP: "198.51.100.1",
					DNSServers: []string{"198.51.100.53"}, Fabric: strconv.Itoa(fabricID), VLAN: strconv.Itoa(vlan.ID), VID: 14,
					RDNSMode: 2, AllowDNS: true, AllowProxy: true, Managed: true})
				if err == nil && (s.VLAN.ID != vlan.ID || s.Space != "tf-space" || s.GatewayIP.String() != "198.51.100.1") {
					err = fmt.Errorf("subnet %+v", s)
				}
				subnetID = s.ID
				return err
			}},
			{"Subnets.Create on the fabric's untagged VLAN", func() error {
				s, err := c.Subnets.Create(&entity.SubnetParams{CIDR: "192.0.2.0/24", Name: "tf_subnet_2", GatewayIP: "192.0.2.1",
					Fabric: strconv.Itoa(fabricID), RDNSMode: 2, AllowDNS: true, AllowProxy: true, Managed: true})
				if err == nil && (s.VLAN.VID != 0 || s.VLAN.FabricID != fabricID) {
					err = fmt.Errorf("subnet %+v", s)
				}
				subnet2ID = s.ID
				return err
			}},
			{"IPRanges.Create", func() error {
				r, err := c.IPRanges.Create(&entity.IPRangeParams{Type: "reserved", Subnet: strconv.Itoa(subnetID),
					StartIP: "198.51.100.2", EndIP: "198.51.100.50", Comment: "Reserved for Static IPs"})
				rangeID = r.ID
				return err
			}},
			{"IPRange.Update", func() error {
				r, err := c.IPRange.Update(rangeID, &entity.IPRangeParams{Type: "reserved", Subnet: strconv.Itoa(subnetID),
					StartIP: "198.51.100.2", EndIP: "198.51.100.60"})
				if err == nil && r.EndIP.String() != "198.51.100.60" {
					err = fmt.Errorf("range %+v", r)
				}
				return err
			}},
			{"StaticRoutes.Create", func() error {
				r, err := c.StaticRoutes.Create(&entity.StaticRouteParams{Source: strconv.Itoa(subnetID), Destination: strconv.Itoa(subnet2ID),
					GatewayIP: "198.51.100.254", Metric: 10})
				if err == nil && (r.Destination.ID != subnet2ID || r.Metric != 10) {
					err = fmt.Errorf("route %+v", r)
				}
				routeID = r.ID
				return err
			}},
			{"StaticRoute.Get", func() error {
				r, err := c.StaticRoute.Get(routeID)
				if err == nil && r.GatewayIP != "198.51.100.254" {
					err = fmt.Errorf("route %+v", r)
				}
				return err
			}},
			{"StaticRoute.Update", func() error {
				_, err := c.StaticRoute.Update(routeID, &entity.StaticRouteParams{Source: strconv.Itoa(subnetID),
					Destination: strconv.Itoa(subnet2ID), GatewayIP: "198.51.100.253", Metric: 20})
				return err
			}},
			{"IPAddresses.Reserve", func() error {
				a, err := c.IPAddresses.Reserve(&entity.IPAddressesParams{Subnet: strconv.Itoa(subnetID)})
				// Managed: the whole subnet but its gateway, DNS server and
				// reserved range.
				if err == nil && a.IP.String() != "198.51.100.61" {
					err = fmt.Errorf("reserved %+v, want 198.51.100.61", a)
				}
				return err
			}},
			{"IPAddresses.Get", func() error {
				as, err := c.IPAddresses.Get(&entity.IPAddressesParams{})
				if err == nil && (len(as) != 1 || as[0].Owner.UserName != "admin") {
					b, _ := json.Marshal(as)
					err = fmt.Errorf("addresses %s", b)
				}
				return err
			}},
			{"Space.Get", func() error {
				s, err := c.Space.Get(spaceID)
				if err == nil && (len(s.VLANs) != 1 || len(s.Subnets) != 1) {
					err = fmt.Errorf("space %+v", s)
				}
				return err
			}},
			{"Space.Update", func() error { _, err := c.Space.Update(spaceID, "tf-space-2"); return err }},
			{"StaticRoute.Delete", func() error { return c.StaticRoute.Delete(routeID) }},
			{"IPRange.Delete", func() error { return c.IPRange.Delete(rangeID) }},
			{"Subnet.Delete with a reservation", func() error {
				if err := c.Subnet.Delete(subnetID); err == nil || !strings.Contains(err.Error(), "Cannot delete a subnet that has IP addresses in use") {
					return fmt.Errorf("deleting a subnet with a reservation: %v", err)
				}
				return nil
			}},
			{"IPAddresses.Release", func() error {
				return c.IPAddresses.Release(&entity.IPAddressesParams{IP: "198.51.100.61"})
			}},
			{"Subnet.Delete", func() error { return c.Subnet.Delete(subnetID) }},
			{"Subnet.Delete 2", func() error { return c.Subnet.Delete(subnet2ID) }},
			{"VLAN.Delete", func() error { return c.VLAN.Delete(fabricID, 14) }},
			{"Fabric.Delete", func() error { return c.Fabric.Delete(fabricID) }},
			{"Space.Delete", func() error { return c.Space.Delete(spaceID) }},
			{"Fabrics.Get", func() error {
				fs, err := c.Fabrics.Get()
				if err == nil && (len(fs) != 1 || fs[0].Name != "fabric-0") {
					err = fmt.Errorf("fabrics %+v", fs)
				}
				return err
			}},
		}
		for _, cl := range calls {
			if err := cl.call(); err != nil {
				t.Errorf("%s: %v", cl.name, err)
			}
		}
	})
}
