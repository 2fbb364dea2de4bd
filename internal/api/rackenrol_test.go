package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/rack"
)

type apiRack struct {
	SystemID   string `json:"system_id"`
	Hostname   string `json:"hostname"`
	Enrolled   bool   `json:"enrolled"`
	LastReport string `json:"last_report"`
	BMCNets    []string
	IPs        []string `json:"ip_addresses"`
	Interfaces []struct {
		Name  string `json:"name"`
		MAC   string `json:"mac_address"`
		MTU   int    `json:"effective_mtu"`
		VLAN  *struct{ ID int64 }
		Links []struct {
			Mode      string `json:"mode"`
			IPAddress string `json:"ip_address"`
			Subnet    *struct {
				CIDR string `json:"cidr"`
			} `json:"subnet"`
		} `json:"links"`
	} `json:"interface_set"`
	Services []struct {
		Name       string `json:"name"`
		Status     string `json:"status"`
		StatusInfo string `json:"status_info"`
	} `json:"service_set"`
	VLANs []struct {
		ID   int64  `json:"id"`
		Role string `json:"role"`
	} `json:"vlans"`
}

func (e *env) rackByID(id string) apiRack {
	e.t.Helper()
	var rk apiRack
	e.must(200, "GET", "rackcontrollers/"+id+"/", e.admin, nil, &rk)
	var raw map[string]json.RawMessage
	e.must(200, "GET", "rackcontrollers/"+id+"/", e.admin, nil, &raw)
	_ = json.Unmarshal(raw["bmc_networks"], &rk.BMCNets)
	return rk
}

// TestRackEnrolment goes through a rack's life with the API alone: an
// administrator (only) issues a secret, a rack spends it once for a
// credential that opens the rack API and nothing else, reports its
// interfaces and services (a bad report is refused whole), claims power
// only as itself, and is deleted, which revokes the credential at once.
func TestRackEnrolment(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.must(http.StatusForbidden, "POST", "rackcontrollers/?op=enrol_secret", e.user, nil, nil)
		e.must(http.StatusBadRequest, "POST", "rackcontrollers/?op=enrol_secret", e.admin, url.Values{"expires_in": {"10"}}, nil)
		var sec struct{ Secret, Expires string }
		e.must(200, "POST", "rackcontrollers/?op=enrol_secret", e.admin, nil, &sec)
		if len(sec.Secret) < 32 || sec.Expires == "" {
			t.Fatalf("secret: %+v", sec)
		}

		enrol := func(secret, host string) (int, []byte) {
			return e.call("POST", "rack/?op=enrol", "", url.Values{rack.EnrolSecretField: {secret}, rack.EnrolHostnameField: {host}})
		}
		if code, b := enrol(sec.Secret+"x", "rack-a"); code != http.StatusForbidden || strings.Contains(string(b), sec.Secret) {
			t.Fatalf("wrong secret: %d %s", code, b)
		}
		if code, _ := enrol(sec.Secret, ""); code != http.StatusBadRequest {
			t.Fatalf("no hostname: %d", code)
		}
		code, b := enrol(sec.Secret, "rack-a")
		var cred rack.Credentials
		if code != 200 || json.Unmarshal(b, &cred) != nil || cred.SystemID == "" || cred.Hostname != "rack-a" {
			t.Fatalf("enrol: %d %s", code, b)
		}
		if code, _ := enrol(sec.Secret, "rack-b"); code != http.StatusForbidden {
			t.Fatalf("the secret enrolled a second rack: %d", code)
		}
		key := cred.APIKey

		// The credential is a rack's, not a user's.
		for _, c := range []struct{ method, path string }{
			{"GET", "machines/"}, {"POST", "machines/"}, {"GET", "users/"}, {"GET", "rackcontrollers/"},
			{"POST", "rackcontrollers/?op=enrol_secret"}, {"DELETE", "rackcontrollers/" + cred.SystemID + "/"},
		} {
			if code, b := e.call(c.method, c.path, key, nil); code != http.StatusForbidden {
				t.Errorf("%s %s with a rack's credential: %d %s", c.method, c.path, code, b)
			}
		}

		var sub struct {
			ID   int64
			VLAN struct{ ID int64 } `json:"vlan"`
		}
		e.must(200, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/24"}}, &sub)
		report := rack.Status{
			Interfaces: []rack.StatusInterface{
				{Name: "eth0", MAC: "52:54:00:aa:bb:01", MTU: 1500, Up: true, Addresses: []string{"192.0.2.5/24", "fe80::1/64"}},
				{Name: "eth1", MTU: 9000, Up: false, Addresses: []string{}},
			},
			BMCNetworks: []string{"198.51.100.0/24"},
			Services: []rack.ServiceStatus{
				{Name: rack.ServiceDHCP, Status: rack.StatusRunning, Info: "on eth0"},
				{Name: rack.ServiceDNS, Status: rack.StatusDead, Info: "not serving: port 53 taken"},
			},
			DNS: []string{"192.0.2.5", "fe80::1", "198.51.100.9", "127.0.0.1", "nonsense"},
		}
		rb, _ := json.Marshal(report)
		e.must(http.StatusNoContent, "POST", "rack/?op=report", key, url.Values{"status": {string(rb)}}, nil)
		// The DNS addresses a report gives replace the rack's (those a
		// machine can use); a report without any keeps them.
		dnsOf := func() string {
			t.Helper()
			rs, err := e.srv.Store.ListRacks(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if r.SystemID == cred.SystemID {
					return strings.Join(r.DNS, ",")
				}
			}
			t.Fatalf("rack %s not listed", cred.SystemID)
			return ""
		}
		if got := dnsOf(); got != "192.0.2.5,198.51.100.9" {
			t.Errorf("DNS addresses after a report: %q", got)
		}
		noDNS := report
		noDNS.DNS = nil
		nb, _ := json.Marshal(noDNS)
		e.must(http.StatusNoContent, "POST", "rack/?op=report", key, url.Values{"status": {string(nb)}}, nil)
		if got := dnsOf(); got != "192.0.2.5,198.51.100.9" {
			t.Errorf("DNS addresses after a report without them: %q", got)
		}
		for _, bad := range []string{"{", `{"services":[{"name":"ntp","status":"running"}]}`,
			`{"interfaces":[{"name":"eth0","addresses":["192.0.2.300/24"]}]}`, `{"bmc_networks":["everything"]}`,
			`{"services":[{"name":"dhcpd","status":"fine"}]}`} {
			if code, b := e.call("POST", "rack/?op=report", key, url.Values{"status": {bad}}); code != http.StatusBadRequest {
				t.Errorf("report %s: %d %s", bad, code, b)
			}
		}

		rk := e.rackByID(cred.SystemID)
		if !rk.Enrolled || rk.Hostname != "rack-a" || rk.LastReport == "" || len(rk.BMCNets) != 1 || rk.BMCNets[0] != "198.51.100.0/24" {
			t.Fatalf("rack: %+v", rk)
		}
		if len(rk.IPs) != 1 || rk.IPs[0] != "192.0.2.5" {
			t.Errorf("addresses: %v (link-local left out)", rk.IPs)
		}
		if len(rk.Interfaces) != 2 || rk.Interfaces[0].Name != "eth0" || rk.Interfaces[0].MAC != "52:54:00:aa:bb:01" ||
			rk.Interfaces[0].VLAN == nil || rk.Interfaces[0].VLAN.ID != sub.VLAN.ID || len(rk.Interfaces[0].Links) != 2 ||
			rk.Interfaces[0].Links[0].Subnet == nil || rk.Interfaces[0].Links[0].Subnet.CIDR != "192.0.2.0/24" ||
			rk.Interfaces[1].MTU != 9000 || rk.Interfaces[1].VLAN != nil {
			t.Errorf("interfaces: %+v", rk.Interfaces)
		}
		svc := map[string]string{}
		for _, s := range rk.Services {
			svc[s.Name] = s.Status + " " + s.StatusInfo
		}
		if svc["rackd"] != "running " || svc["dhcpd"] != "running on eth0" || svc["dns_rack"] != "dead not serving: port 53 taken" {
			t.Errorf("services: %v", svc)
		}
		if len(rk.VLANs) != 1 || rk.VLANs[0].ID != sub.VLAN.ID || rk.VLANs[0].Role != "connected" {
			t.Errorf("vlans: %+v", rk.VLANs)
		}
		e.must(200, "PUT", "vlans/"+itoa(sub.VLAN.ID)+"/", e.admin, url.Values{"primary_rack": {cred.SystemID}}, nil)
		if rk := e.rackByID(cred.SystemID); len(rk.VLANs) != 1 || rk.VLANs[0].Role != "primary" {
			t.Errorf("vlans as primary: %+v", rk.VLANs)
		}

		claim := func(id string) int {
			code, _ := e.call("POST", "rack/?op=power_claim", key, url.Values{rack.PowerRackID: {id}, rack.PowerWait: {"0"}})
			return code
		}
		if code := claim("someone-else"); code != http.StatusForbidden {
			t.Errorf("claim as another rack: %d", code)
		}
		if code := claim(rack.PowerIDFor(cred.SystemID)); code != http.StatusNoContent {
			t.Errorf("claim as itself: %d", code)
		}

		e.must(http.StatusForbidden, "DELETE", "rackcontrollers/"+cred.SystemID+"/", e.user, nil, nil)
		e.must(http.StatusNoContent, "DELETE", "rackcontrollers/"+cred.SystemID+"/", e.admin, nil, nil)
		e.must(http.StatusNotFound, "GET", "rackcontrollers/"+cred.SystemID+"/", e.admin, nil, nil)
		if code, _ := e.call("POST", "rack/?op=report", key, url.Values{"status": {string(rb)}}); code != http.StatusUnauthorized {
			t.Errorf("report after the rack was deleted: %d", code)
		}
		if code := claim(rack.PowerIDFor(cred.SystemID)); code != http.StatusUnauthorized {
			t.Errorf("claim after the rack was deleted: %d", code)
		}
	})
}
