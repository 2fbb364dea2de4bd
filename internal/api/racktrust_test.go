package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
)

// remotePower leaves power to enrolled racks: the rack in the server's
// process runs none.
func remotePower(c *serve.Config) { c.RackPower.Remote = true }

// enrolRack enrols a rack named host with a secret the administrator
// issues with form (bmc_networks), and returns its credential.
func (e *env) enrolRack(host string, form url.Values) rack.Credentials {
	e.t.Helper()
	var sec struct{ Secret string }
	e.must(http.StatusOK, "POST", "rackcontrollers/?op=enrol_secret", e.admin, form, &sec)
	var cred rack.Credentials
	e.must(http.StatusOK, "POST", "rack/?op=enrol", "", url.Values{rack.EnrolSecretField: {sec.Secret}, rack.EnrolHostnameField: {host}}, &cred)
	return cred
}

// claimAs is one power claim of an enrolled rack declaring nets: the work
// handed out (nil for none) and the answer's body.
func (e *env) claimAs(cred rack.Credentials, nets ...string) (*rack.PowerWork, string) {
	e.t.Helper()
	code, b := e.call("POST", "rack/?op=power_claim", cred.APIKey, url.Values{
		rack.PowerRackID: {rack.PowerIDFor(cred.SystemID)}, rack.PowerNetworks: nets, rack.PowerWait: {"0"}})
	switch code {
	case http.StatusNoContent:
		return nil, ""
	case http.StatusOK:
		var w rack.PowerWork
		if err := json.Unmarshal(b, &w); err != nil {
			e.t.Fatal(err)
		}
		return &w, string(b)
	}
	e.t.Fatalf("power claim: %d %s", code, b)
	return nil, ""
}

// TestRackClaimsOnlyItsGrant: an enrolled rack's power claims are served
// only for the BMC networks an administrator granted it. A rack granted
// site A's network that declares 0.0.0.0/0, or site B's network, is given
// no request for site B's BMC and never its password; the rack granted
// site B is. Once the administrator grants the first rack site B too
// (PUT rackcontrollers/<id>/), it is given it.
func TestRackClaimsOnlyItsGrant(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		siteA := e.enrolRack("rack-a", url.Values{"bmc_networks": {"192.0.2.0/24"}})
		siteB := e.enrolRack("rack-b", url.Values{"bmc_networks": {"198.51.100.0/24"}})
		if rk := e.rackGrant(siteA.SystemID); strings.Join(rk.Granted, ",") != "192.0.2.0/24" {
			t.Fatalf("rack-a's grant: %+v", rk)
		}
		// Both racks are live: each has asked for work once.
		for _, c := range []struct {
			cred rack.Credentials
			nets []string
		}{{siteA, []string{"0.0.0.0/0", "::/0"}}, {siteB, []string{"198.51.100.0/24"}}} {
			if w, _ := e.claimAs(c.cred, c.nets...); w != nil {
				t.Fatalf("work before any was queued: %+v", w)
			}
		}
		const passA, passB = "site-a-secret-pass", "site-b-secret-pass"
		ipmi := func(addr, pass string) url.Values {
			return url.Values{"power_type": {"ipmi"}, "power_parameters_power_address": {addr},
				"power_parameters_power_user": {"admin"}, "power_parameters_power_pass": {pass}}
		}
		ma := e.addMachine("site-a-m", "52:54:00:7a:00:01", ipmi("192.0.2.10", passA))
		mb := e.addMachine("site-b-m", "52:54:00:7a:00:02", ipmi("198.51.100.10", passB))
		for _, m := range []apiMachine{ma, mb} {
			e.must(http.StatusOK, "POST", "machines/"+m.SystemID+"/", e.admin, url.Values{"op": {"power_on"}}, nil)
		}

		// rack-a, declaring everything and then site B alone, gets site
		// A's request and nothing of site B's.
		for _, nets := range [][]string{{"0.0.0.0/0", "::/0"}, {"198.51.100.0/24"}, {"0.0.0.0/0", "::/0"}} {
			w, body := e.claimAs(siteA, nets...)
			if strings.Contains(body, passB) || w != nil && w.SystemID == mb.SystemID {
				t.Fatalf("rack-a declaring %v was handed site B's BMC: %s", nets, body)
			}
			if w != nil && (w.SystemID != ma.SystemID || w.PowerParameters["power_pass"] != passA) {
				t.Fatalf("rack-a declaring %v: %+v", nets, w)
			}
		}
		// The rack granted site B gets site B's request.
		if w, _ := e.claimAs(siteB, "198.51.100.0/24"); w == nil || w.SystemID != mb.SystemID || w.PowerParameters["power_pass"] != passB {
			t.Fatalf("rack-b: %+v", w)
		}

		// A grant is the administrator's: a rack cannot change it, a
		// user may not, bad networks are refused, and nothing changes.
		grant := url.Values{"granted_bmc_networks": {"192.0.2.0/24", "198.51.100.0/24"}}
		e.must(http.StatusForbidden, "PUT", "rackcontrollers/"+siteA.SystemID+"/", siteA.APIKey, grant, nil)
		e.must(http.StatusForbidden, "PUT", "rackcontrollers/"+siteA.SystemID+"/", e.user, grant, nil)
		e.wantFieldError("PUT", "rackcontrollers/"+siteA.SystemID+"/", e.admin, url.Values{"granted_bmc_networks": {"site-b"}},
			"granted_bmc_networks", `BMC network "site-b" is not a CIDR such as 192.0.2.0/24`)
		if rk := e.rackGrant(siteA.SystemID); strings.Join(rk.Granted, ",") != "192.0.2.0/24" {
			t.Fatalf("rack-a's grant after refusals: %+v", rk)
		}
		e.must(http.StatusOK, "PUT", "rackcontrollers/"+siteA.SystemID+"/", e.admin, grant, nil)
		if rk := e.rackGrant(siteA.SystemID); strings.Join(rk.Granted, ",") != "192.0.2.0/24,198.51.100.0/24" {
			t.Fatalf("rack-a's grant: %+v", rk)
		}
		mb2 := e.addMachine("site-b-m2", "52:54:00:7a:00:03", ipmi("198.51.100.11", passB))
		e.must(http.StatusOK, "POST", "machines/"+mb2.SystemID+"/", e.admin, url.Values{"op": {"power_on"}}, nil)
		if w, _ := e.claimAs(siteA, "0.0.0.0/0"); w == nil || w.SystemID != mb2.SystemID {
			t.Fatalf("rack-a after its grant: %+v", w)
		}
	}, remotePower)
}

// rackTrust is what the rack listing says a rack is trusted with.
type rackTrust struct {
	Granted []string `json:"granted_bmc_networks"`
	Served  []string `json:"served_subnets"`
	IPs     []string `json:"ip_addresses"`
}

func (e *env) rackGrant(id string) rackTrust {
	e.t.Helper()
	var rk rackTrust
	e.must(http.StatusOK, "GET", "rackcontrollers/"+id+"/", e.admin, nil, &rk)
	return rk
}

// report sends an enrolled rack's status report.
func (e *env) report(cred rack.Credentials, st rack.Status) {
	e.t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		e.t.Fatal(err)
	}
	e.must(http.StatusNoContent, "POST", "rack/?op=report", cred.APIKey, url.Values{"status": {string(b)}}, nil)
}

// TestRackReportedAddressesOnlyInServedSubnets: an enrolled rack that
// reports every address of a subnet it does not serve as its own does
// not use the subnet up, and DHCP leases it reports there are not kept;
// once an administrator confirms it serves the subnet
// (served_subnets=reported), its addresses there are taken and its
// leases kept.
func TestRackReportedAddressesOnlyInServedSubnets(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		var sn struct{ ID int64 }
		e.must(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"198.18.0.0/24"}}, &sn)
		cred := e.enrolRack("greedy", nil)
		// Every address of the subnet, 64 an interface (a report's limit).
		var st rack.Status
		for i := 1; i <= 254; i++ {
			if i%64 == 1 {
				st.Interfaces = append(st.Interfaces, rack.StatusInterface{Name: "eth" + itoa(int64(i/64)), MTU: 1500, Up: true})
			}
			last := &st.Interfaces[len(st.Interfaces)-1]
			last.Addresses = append(last.Addresses, "198.18.0."+itoa(int64(i))+"/24")
		}
		st.DNS = []string{"198.18.0.53"}
		e.report(cred, st)
		var got struct {
			IP string `json:"ip"`
		}
		e.must(http.StatusOK, "POST", "ipaddresses/", e.admin, url.Values{"op": {"reserve"}, "subnet": {itoa(sn.ID)}}, &got)
		if !strings.HasPrefix(got.IP, "198.18.0.") {
			t.Fatalf("reserved %q", got.IP)
		}
		if rk := e.rackGrant(cred.SystemID); len(rk.Served) != 0 {
			t.Fatalf("served before any was confirmed: %+v", rk)
		}
		// Nor do DHCP leases it says it gave there reach other racks.
		leases := func() int {
			t.Helper()
			b, _ := json.Marshal([]rack.Lease{{MAC: "52:54:00:7b:00:09", IP: "198.18.0.9", Subnet: "198.18.0.0/24", Expires: time.Now().Add(time.Hour)}})
			e.must(http.StatusOK, "POST", "rack/?op=dhcp_leases", cred.APIKey, url.Values{"leases": {string(b)}}, nil)
			ls, err := e.srv.Store.RackLeases(t.Context(), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			return len(ls)
		}
		if n := leases(); n != 0 {
			t.Fatalf("%d leases kept in a subnet the rack does not serve", n)
		}

		// Confirmed by the administrator, they are the rack's.
		e.must(http.StatusOK, "PUT", "rackcontrollers/"+cred.SystemID+"/", e.admin, url.Values{"served_subnets": {"reported"}}, nil)
		if rk := e.rackGrant(cred.SystemID); strings.Join(rk.Served, ",") != "198.18.0.0/24" {
			t.Fatalf("served after confirming the report: %+v", rk)
		}
		if code, b := e.call("POST", "ipaddresses/", e.admin, url.Values{"op": {"reserve"}, "subnet": {itoa(sn.ID)}}); code == http.StatusOK {
			t.Fatalf("a subnet the rack serves whole still gave an address: %s", b)
		}
		if n := leases(); n != 1 {
			t.Fatalf("%d leases kept in a subnet the rack serves", n)
		}
	}, remotePower)
}

// TestRackDNSOnlyInServedSubnets: a deployed machine's network config
// names as nameservers the DNS addresses of racks in subnets they serve,
// never one a rack reports in a subnet it does not serve.
func TestRackDNSOnlyInServedSubnets(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		f := newNetFixture(t, e)
		var prov struct{ ID int64 }
		e.must(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/29"}, "gateway_ip": {"192.0.2.1"},
			"vlan": {itoa(f.untagged.ID)}}, &prov)
		served := e.enrolRack("served", nil)
		e.must(http.StatusOK, "PUT", "rackcontrollers/"+served.SystemID+"/", e.admin, url.Values{"served_subnets": {"192.0.2.0/29"}}, nil)
		e.report(served, rack.Status{DNS: []string{"192.0.2.1"}})
		rogue := e.enrolRack("rogue", nil)
		e.report(rogue, rack.Status{DNS: []string{"192.0.2.6"}})

		e.uploadImage("custom/netimg", "amd64/generic")
		mac := "52:54:00:7c:00:01"
		m := e.addMachine("dnsdeploy", mac, nil)
		eth0 := e.ifaces(m.SystemID)["eth0"]
		base := "nodes/" + m.SystemID + "/interfaces/" + id(eth0) + "/"
		e.must(http.StatusOK, http.MethodPut, base, e.admin, url.Values{"vlan": {itoa(f.untagged.ID)}}, nil)
		e.must(http.StatusOK, http.MethodPost, base, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"AUTO"}, "subnet": {itoa(prov.ID)}}, nil)
		if _, err := e.srv.Store.UpdateMachine(ctx, m.SystemID, func(x *machine.Machine) ([]machine.Event, error) {
			x.Status = machine.Ready
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		e.must(http.StatusOK, http.MethodPost, "machines/"+m.SystemID+"/", e.admin, url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"netimg"}}, nil)
		r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", mac), Purpose: "install", Enrol: e.enrol(m.SystemID)})
		if err != nil || r.Action != agentapi.ActionProceed {
			t.Fatalf("hello: %+v %v", r, err)
		}
		task, err := e.agent(r.Token).Task(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cfg := strings.ReplaceAll(task.NetworkConfig, `"`, "")
		if !strings.Contains(cfg, "nameservers:\n        addresses:\n          - 192.0.2.1\n") || strings.Contains(cfg, "192.0.2.6") {
			t.Fatalf("network-config's nameservers: want the serving rack's 192.0.2.1 alone:\n%s", cfg)
		}
	})
}

// udpSink counts the datagrams sent to a loopback address.
type udpSink struct {
	conn *net.UDPConn
	got  chan struct{}
}

func newUDPSink(t *testing.T, ip string) *udpSink {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(ip)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s := &udpSink{conn: c, got: make(chan struct{}, 1024)}
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := c.ReadFromUDP(buf); err != nil {
				return
			}
			s.got <- struct{}{}
		}
	}()
	return s
}

func (s *udpSink) addr() string { return s.conn.LocalAddr().String() }

// TestEnlistedBMCOnlyOnAllowedNetworks: an anonymous enlistment reports
// its BMC and the credentials it created there. A BMC on a network no
// rack may act on (here: 127.0.0.1, while the one rack is granted
// 127.0.0.2/32 and declares everything) is not made the machine's power
// address, the machine says why, and its BMC gets no IPMI traffic; one on
// the granted network is used, and the rack's IPMI reaches it.
func TestEnlistedBMCOnlyOnAllowedNetworks(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		cred := e.enrolRack("bmcs", url.Values{"bmc_networks": {"127.0.0.2/32"}})
		cl, err := client.New(e.base, cred.APIKey)
		if err != nil {
			t.Fatal(err)
		}
		w, err := rack.StartPower(ctx, cl, rack.PowerConfig{ID: rack.PowerIDFor(cred.SystemID),
			Networks: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}, Drivers: serve.Drivers(), Wait: time.Second,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Close)
		elsewhere, allowed := newUDPSink(t, "127.0.0.1"), newUDPSink(t, "127.0.0.2")

		enlist := func(mac, bmc string) apiMachine {
			t.Helper()
			host, port, _ := net.SplitHostPort(bmc)
			p, _ := strconv.Atoi(port)
			id := ident("", mac)
			id.BMC = &machine.BMCInfo{Type: "ipmi", Address: host, Port: p}
			a := e.agent("")
			if r, err := a.Hello(ctx, agentapi.HelloRequest{Identity: id, Purpose: "enlist"}); err != nil || r.BMCUser != "anvil" {
				t.Fatalf("hello: %+v %v", r, err)
			}
			if _, err := a.Enlist(ctx, agentapi.EnlistRequest{Identity: id, BMCCredentials: &agentapi.BMCCredentials{User: "anvil", Password: "Zq3xK8mN2pR7tW4v"}}); err != nil {
				t.Fatal(err)
			}
			var list []apiMachine
			e.must(http.StatusOK, http.MethodGet, "machines/", e.admin, url.Values{"mac_address": {mac}}, &list)
			if len(list) != 1 {
				t.Fatalf("enlisted: %+v", list)
			}
			return list[0]
		}
		bad := enlist("52:54:00:7d:00:01", elsewhere.addr())
		var params map[string]string
		e.must(http.StatusOK, http.MethodGet, "machines/"+bad.SystemID+"/", e.admin, url.Values{"op": {"power_parameters"}}, &params)
		if bad.PowerType != "manual" || params["power_address"] != "" || !strings.Contains(bad.StatusMsg, "no rack reaches BMC 127.0.0.1") {
			t.Fatalf("enlisted with a BMC elsewhere: %s, %v, %q", bad.PowerType, params, bad.StatusMsg)
		}
		e.must(http.StatusOK, "POST", "machines/"+bad.SystemID+"/", e.admin, url.Values{"op": {"power_on"}}, nil)

		good := enlist("52:54:00:7d:00:02", allowed.addr())
		if good.PowerType != "ipmi" {
			t.Fatalf("enlisted with a BMC on the granted network: %s %q", good.PowerType, good.StatusMsg)
		}
		e.must(http.StatusOK, "POST", "machines/"+good.SystemID+"/", e.admin, url.Values{"op": {"power_on"}}, nil)
		select {
		case <-allowed.got: // the rack's probe or command reached the granted BMC
		case <-ctx.Done():
			t.Fatal("no IPMI traffic reached the BMC on the granted network")
		}
		if n := len(elsewhere.got); n != 0 {
			t.Fatalf("%d datagrams reached the BMC elsewhere", n)
		}
	}, remotePower, func(c *serve.Config) { c.EnlistBMCUser = "anvil" })
}
