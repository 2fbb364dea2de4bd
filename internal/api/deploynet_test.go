package api_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// TestDeployNetwork deploys a machine with an active-backup bond of two
// NICs, VLAN 100 on it with a STATIC address and a third NIC AUTO on
// another subnet: a model that cannot be rendered (the AUTO subnet has no
// free address) is refused with the field error and nothing changes;
// once it can, the deployment's task carries the rendered network-config
// with the allocated address the API shows, and release gives back the
// AUTO address while the STATIC one stays.
func TestDeployNetwork(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := newNetFixture(t, e)
		prov, err := e.srv.Store.CreateSubnet(ctx, store.Subnet{Name: "prov", CIDR: "192.0.2.0/29", Gateway: "192.0.2.1",
			VLANID: f.untagged.ID, Managed: true, AllowDNS: true, LeaseSeconds: 600})
		if err != nil {
			t.Fatal(err)
		}
		full, err := e.srv.Store.CreateIPRange(ctx, store.IPRange{SubnetID: prov.ID, Type: "dynamic", Start: "192.0.2.2", End: "192.0.2.6"})
		if err != nil {
			t.Fatal(err)
		}
		// A rack answering DNS on the AUTO subnet, and a second
		// authoritative domain: the deployed machine is told of both.
		if err := e.srv.Store.TouchRack(ctx, store.Rack{SystemID: "rk1", Hostname: "rack1", Address: "127.0.0.1", DNS: []string{"192.0.2.1", "203.0.113.53"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.srv.Store.CreateDomain(ctx, store.Domain{Name: "lab.example", Authoritative: true}); err != nil {
			t.Fatal(err)
		}
		e.uploadImage("custom/netimg", "amd64/generic")
		macs := []string{"52:54:00:16:01:01", "52:54:00:16:01:02", "52:54:00:16:01:03"}
		m := e.addMachine("netdeploy", macs[0], url.Values{"mac_addresses": macs})
		base := "nodes/" + m.SystemID + "/interfaces/"
		is := e.ifaces(m.SystemID)
		for _, i := range is {
			e.must(http.StatusOK, http.MethodPut, base+id(i)+"/", e.admin, url.Values{"vlan": {itoa(f.untagged.ID)}}, nil)
		}
		var bond, vl apiIface
		e.must(http.StatusOK, http.MethodPost, base, e.admin, url.Values{"op": {"create_bond"}, "name": {"bond0"},
			"parents": {id(is["eth0"]), id(is["eth1"])}, "bond_mode": {"active-backup"}}, &bond)
		e.must(http.StatusOK, http.MethodPost, base, e.admin, url.Values{"op": {"create_vlan"}, "vlan": {itoa(f.vlan100.ID)}, "parent": {id(bond)}}, &vl)
		e.must(http.StatusOK, http.MethodPost, base+id(vl)+"/", e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"},
			"subnet": {itoa(f.subnet.ID)}, "ip_address": {"198.51.100.10"}}, nil)
		e.must(http.StatusOK, http.MethodPost, base+id(is["eth2"])+"/", e.admin, url.Values{"op": {"link_subnet"}, "mode": {"AUTO"},
			"subnet": {itoa(prov.ID)}}, nil)
		if _, err := e.srv.Store.UpdateMachine(ctx, m.SystemID, func(x *machine.Machine) ([]machine.Event, error) {
			x.Status = machine.Ready
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		deploy := url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"netimg"}}
		e.wantFieldError(http.MethodPost, "machines/"+m.SystemID+"/", e.admin, deploy, "eth2.links.0.ip_address", "No more IPs available in subnet: 192.0.2.0/29.")
		if got := e.machine(m.SystemID); got.StatusName != "Ready" {
			t.Fatalf("after a refused deploy: %s", got.StatusName)
		}
		if err := e.srv.Store.DeleteIPRange(ctx, full.ID); err != nil {
			t.Fatal(err)
		}
		e.must(http.StatusOK, http.MethodPost, "machines/"+m.SystemID+"/", e.admin, deploy, nil)
		var mj struct {
			IPAddresses []string `json:"ip_addresses"`
		}
		e.must(http.StatusOK, http.MethodGet, "machines/"+m.SystemID+"/", e.admin, nil, &mj)
		if slices.Sort(mj.IPAddresses); strings.Join(mj.IPAddresses, ",") != "192.0.2.2,198.51.100.10" {
			t.Fatalf("addresses after deploy: %v", mj.IPAddresses)
		}

		r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", macs[0]), Purpose: "install", Enrol: e.enrol(m.SystemID)})
		if err != nil || r.Action != agentapi.ActionProceed {
			t.Fatalf("hello: %+v %v", r, err)
		}
		tok := e.agent(r.Token)
		task, err := tok.Task(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"network:\n  version: 2\n",
			"      macaddress: " + macs[2] + "\n", "      set-name: eth2\n", "        - 192.0.2.2/29\n", "      gateway4: 192.0.2.1\n",
			"  bonds:\n    bond0:\n", "        - eth0\n        - eth1\n", "        mode: active-backup\n",
			"  vlans:\n    bond0.100:\n      id: 100\n      link: bond0\n", "        - 198.51.100.10/24\n", "          - 198.51.100.53\n",
			// the rack on eth2's subnet only; the search list MAAS's
			"      nameservers:\n        addresses:\n          - 192.0.2.1\n        search:\n          - maas\n          - lab.example\n",
		} {
			if !strings.Contains(strings.ReplaceAll(task.NetworkConfig, `"`, ""), want) {
				t.Fatalf("network-config lacks %q:\n%s", want, task.NetworkConfig)
			}
		}
		if err := tok.Signal(ctx, agentapi.StatusInstalled, "", nil); err != nil {
			t.Fatal(err)
		}
		e.rackBootedLocal(macs[0])
		if code, body := osUp(t, tok.OSUpURL()); code != http.StatusOK {
			t.Fatalf("os-up: %d %s", code, body)
		}
		e.waitStatus(m.SystemID, "Deployed")
		e.must(http.StatusOK, http.MethodPost, "machines/"+m.SystemID+"/", e.admin, url.Values{"op": {"release"}}, nil)
		e.must(http.StatusOK, http.MethodGet, "machines/"+m.SystemID+"/", e.admin, nil, &mj)
		if strings.Join(mj.IPAddresses, ",") != "198.51.100.10" {
			t.Fatalf("addresses after release: %v", mj.IPAddresses)
		}
		// The AUTO link stays, without its address.
		if l := e.ifaces(m.SystemID)["eth2"].Links; len(l) != 1 || l[0].Mode != "auto" || l[0].IPAddress != "" {
			t.Fatalf("eth2 after release: %+v", l)
		}
	})
}

// TestDeployNetworkRace: two deploys of one machine at once; the one the
// lifecycle refuses must not give back the addresses of the one that won.
func TestDeployNetworkRace(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := newNetFixture(t, e)
		e.uploadImage("custom/netimg", "amd64/generic")
		m := e.addMachine("racer", "52:54:00:16:06:01", nil)
		eth0 := e.ifaces(m.SystemID)["eth0"]
		path := "nodes/" + m.SystemID + "/interfaces/" + id(eth0) + "/"
		e.must(http.StatusOK, http.MethodPut, path, e.admin, url.Values{"vlan": {itoa(f.vlan100.ID)}}, nil)
		e.must(http.StatusOK, http.MethodPost, path, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"AUTO"}, "subnet": {itoa(f.subnet.ID)}}, nil)
		if _, err := e.srv.Store.UpdateMachine(ctx, m.SystemID, func(x *machine.Machine) ([]machine.Event, error) {
			x.Status = machine.Ready
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		deploy := url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"netimg"}}
		codes := make(chan int, 2)
		for range 2 {
			go func() { code, _ := e.call(http.MethodPost, "machines/"+m.SystemID+"/", e.admin, deploy); codes <- code }()
		}
		ok := 0
		for range 2 {
			if <-codes == http.StatusOK {
				ok++
			}
		}
		if ok == 0 {
			t.Fatal("neither deploy was accepted")
		}
		if l := e.ifaces(m.SystemID)["eth0"].Links; len(l) != 1 || l[0].IPAddress == "" {
			t.Fatalf("the deploying machine lost its AUTO address: %+v", l)
		}
	})
}
