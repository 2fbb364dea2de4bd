package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	gmc "github.com/canonical/gomaasclient/client"
	"github.com/canonical/gomaasclient/entity"
	"github.com/juju/gomaasapi/v2"
)

// TestGomaasclientDevices drives devices as terraform-provider-maas's
// maas_device does: Devices.Create with a parent, Device.Get, Update,
// the device's NetworkInterfaces, Delete.
func TestGomaasclientDevices(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		c, err := gmc.GetClient(strings.TrimSuffix(e.base, "/"), e.admin, "2.0")
		if err != nil {
			t.Fatal(err)
		}
		var sn struct {
			ID int `json:"id"`
		}
		e.must(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"198.51.100.0/24"}}, &sn)
		parent := e.addMachine("tf-host", "52:54:00:16:05:01", nil)
		d, err := c.Devices.Create(&entity.DeviceCreateParams{Hostname: "tf-dev", MacAddresses: []string{"52:54:00:16:05:10"},
			Parent: parent.SystemID, Description: "from terraform", Zone: "default"})
		if err != nil || d.SystemID == "" || d.Parent != parent.SystemID || d.NodeType != 1 || d.NodeTypeName != "Device" ||
			d.FQDN != "tf-dev.maas" || d.Domain.Name != "maas" || d.Zone.Name != "default" || len(d.InterfaceSet) != 1 {
			t.Fatalf("Devices.Create: %+v %v", d, err)
		}
		got, err := c.Device.Get(d.SystemID)
		if err != nil || got.Hostname != "tf-dev" || got.Description != "from terraform" {
			t.Fatalf("Device.Get: %+v %v", got, err)
		}
		up, err := c.Device.Update(d.SystemID, &entity.DeviceUpdateParams{Hostname: "tf-dev2", Description: "renamed"})
		if err != nil || up.Hostname != "tf-dev2" || up.Description != "renamed" || up.Parent != parent.SystemID {
			t.Fatalf("Device.Update: %+v %v", up, err)
		}
		if _, err := c.Device.SetWorkloadAnnotations(d.SystemID, map[string]string{"owner": "tf"}); err != nil {
			t.Fatalf("SetWorkloadAnnotations: %v", err)
		}
		if got, _ := c.Device.Get(d.SystemID); got.WorkloadAnnotations["owner"] != "tf" {
			t.Fatalf("annotations: %+v", got.WorkloadAnnotations)
		}
		all, err := c.Devices.Get()
		if err != nil || len(all) != 1 || all[0].SystemID != d.SystemID {
			t.Fatalf("Devices.Get: %+v %v", all, err)
		}

		nics, err := c.NetworkInterfaces.Get(d.SystemID)
		if err != nil || len(nics) != 1 || nics[0].MACAddress != "52:54:00:16:05:10" {
			t.Fatalf("NetworkInterfaces.Get: %+v %v", nics, err)
		}
		phys, err := c.NetworkInterfaces.CreatePhysical(d.SystemID, &entity.NetworkInterfacePhysicalParams{MACAddress: "52:54:00:16:05:11", Name: "eth7", VLAN: nics[0].VLAN.ID})
		if err != nil || phys.Name != "eth7" {
			t.Fatalf("CreatePhysical: %+v %v", phys, err)
		}
		linked, err := c.NetworkInterface.LinkSubnet(d.SystemID, nics[0].ID, &entity.NetworkInterfaceLinkParams{Mode: "AUTO", Subnet: sn.ID})
		if err != nil || len(linked.Links) != 1 || linked.Links[0].IPAddress != "198.51.100.1" {
			t.Fatalf("LinkSubnet AUTO: %+v %v", linked, err)
		}
		static, err := c.NetworkInterface.LinkSubnet(d.SystemID, phys.ID, &entity.NetworkInterfaceLinkParams{Mode: "STATIC", Subnet: sn.ID, IPAddress: "198.51.100.40"})
		if err != nil || len(static.Links) != 1 || static.Links[0].IPAddress != "198.51.100.40" {
			t.Fatalf("LinkSubnet STATIC: %+v %v", static, err)
		}
		if got, _ := c.Device.Get(d.SystemID); len(got.IPAddresses) != 2 {
			t.Fatalf("device addresses: %v", got.IPAddresses)
		}
		if err := c.NetworkInterface.Delete(d.SystemID, phys.ID); err != nil {
			t.Fatalf("NetworkInterface.Delete: %v", err)
		}
		if err := c.Device.Delete(d.SystemID); err != nil {
			t.Fatalf("Device.Delete: %v", err)
		}
		if _, err := c.Device.Get(d.SystemID); err == nil {
			t.Fatal("deleted device still read")
		}
	})
}

// TestGomaasapiDevices drives devices as Juju registers a machine's LXD
// containers: machine.CreateDevice with the machine as parent (it names
// the interface, puts it on the subnet's VLAN and links it STATIC with
// no address, so that MAAS picks one), device.CreateInterface and
// LinkSubnet, Controller.Devices, Delete.
func TestGomaasapiDevices(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.must(http.StatusOK, "POST", "spaces/", e.admin, url.Values{"name": {"juju-space"}}, nil)
		var vlan struct {
			ID int `json:"id"`
		}
		e.must(http.StatusOK, "PUT", "fabrics/0/vlans/0/", e.admin, url.Values{"space": {"juju-space"}}, &vlan)
		e.must(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/24"}, "vlan": {fmt.Sprint(vlan.ID)}}, nil)
		host := e.addMachine("juju-host", "52:54:00:16:06:01", nil)

		ctl, err := gomaasapi.NewController(gomaasapi.ControllerArgs{BaseURL: e.base, APIKey: e.admin})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		spaces, err := ctl.Spaces()
		if err != nil {
			t.Fatal(err)
		}
		var subnet gomaasapi.Subnet
		for _, sp := range spaces {
			if sp.Name() == "juju-space" && len(sp.Subnets()) == 1 {
				subnet = sp.Subnets()[0]
			}
		}
		if subnet == nil {
			t.Fatalf("no subnet in juju-space: %v", spaces)
		}
		ms, err := ctl.Machines(gomaasapi.MachinesArgs{SystemIDs: []string{host.SystemID}})
		if err != nil || len(ms) != 1 {
			t.Fatalf("machines: %v %v", ms, err)
		}
		dev, err := ms[0].CreateDevice(gomaasapi.CreateMachineDeviceArgs{Hostname: "juju-host-lxd-0", InterfaceName: "eth0",
			MACAddress: "52:54:00:16:06:10", Subnet: subnet})
		if err != nil {
			t.Fatalf("CreateDevice: %v", err)
		}
		if dev.Parent() != host.SystemID || dev.Hostname() != "juju-host-lxd-0" {
			t.Fatalf("device %s parent %q", dev.Hostname(), dev.Parent())
		}
		iface, err := dev.CreateInterface(gomaasapi.CreateInterfaceArgs{Name: "eth1", MACAddress: "52:54:00:16:06:11", VLAN: subnet.VLAN()})
		if err != nil {
			t.Fatalf("CreateInterface: %v", err)
		}
		if err := iface.LinkSubnet(gomaasapi.LinkSubnetArgs{Mode: gomaasapi.LinkModeStatic, Subnet: subnet, IPAddress: "192.0.2.200"}); err != nil {
			t.Fatalf("LinkSubnet: %v", err)
		}
		found, err := ctl.Devices(gomaasapi.DevicesArgs{SystemIDs: []string{dev.SystemID()}})
		if err != nil || len(found) != 1 {
			t.Fatalf("Devices: %v %v", found, err)
		}
		ips := found[0].IPAddresses()
		slices.Sort(ips)
		// eth0's STATIC link without an address got the subnet's first free one.
		if !slices.Equal(ips, []string{"192.0.2.1", "192.0.2.200"}) {
			t.Fatalf("device addresses %v", ips)
		}
		names := []string{}
		for _, i := range found[0].InterfaceSet() {
			names = append(names, i.Name())
			for _, l := range i.Links() {
				if l.Mode() != "static" {
					t.Errorf("%s link mode %q", i.Name(), l.Mode())
				}
			}
		}
		if !slices.Equal(names, []string{"eth0", "eth1"}) {
			t.Fatalf("interfaces %v", names)
		}
		byMAC, err := ctl.Devices(gomaasapi.DevicesArgs{MACAddresses: []string{"52:54:00:16:06:11"}})
		if err != nil || len(byMAC) != 1 {
			t.Fatalf("Devices by MAC: %v %v", byMAC, err)
		}
		if err := found[0].Delete(); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if left, err := ctl.Devices(gomaasapi.DevicesArgs{}); err != nil || len(left) != 0 {
			t.Fatalf("after delete: %v %v", left, err)
		}
	})
}
