package rack_test

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/testutil/netns"
)

// TestDHCPGivesRackDNS: on a subnet that allows DNS, ISC dhclient's lease
// names the rack's own address first among the DNS servers, then the
// subnet's, with the default domain as domain name and the search list
// MAAS gives (default domain, then the other authoritative domains); the
// rack answers names at that address.
func TestDHCPGivesRackDNS(t *testing.T) {
	if _, err := exec.LookPath("dhclient"); err != nil {
		t.Skip("needs dhclient (Debian isc-dhcp-client)")
	}
	if _, err := exec.LookPath("dig"); err != nil {
		t.Skip("needs dig (Debian bind9-dnsutils)")
	}
	n := newBootNet(t, "", func(n *bootNet, cfg *rack.Config) {
		if err := n.srv.Do(func() (err error) {
			if cfg.DNSConn, err = net.ListenPacket("udp4", rackIP+":53"); err != nil {
				return err
			}
			cfg.DNSListener, err = net.Listen("tcp4", rackIP+":53")
			return err
		}); err != nil {
			t.Fatal(err)
		}
	})
	ctx := context.Background()
	body, err := n.admin.Do(ctx, "GET", "subnets/", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sns []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(body, &sns); err != nil || len(sns) != 1 {
		t.Fatalf("subnets %s: %v", body, err)
	}
	for _, c := range []struct {
		method, path string
		form         url.Values
	}{
		{"PUT", "subnets/" + strconv.FormatInt(sns[0].ID, 10) + "/", url.Values{"dns_servers": {"198.51.100.53"}}},
		{"POST", "domains/", url.Values{"name": {"lab.example"}, "authoritative": {"true"}}},
		{"POST", "dnsresources/", url.Values{"fqdn": {"www.maas"}, "ip_addresses": {"192.0.2.77"}}},
	} {
		if _, err := n.admin.Do(ctx, c.method, c.path, nil, c.form); err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
	}
	waitFor(t, "the rack to learn the subnet's DNS", func() bool {
		ss := n.rack.Cache.Subnets()
		return len(ss) == 1 && len(ss[0].DNS) == 1 && slices.Contains(ss[0].Search, "lab.example")
	})

	// The rack told the region where it answers DNS: deployed machines
	// are given that address.
	waitFor(t, "the region to record the rack's DNS address", func() bool {
		rs, err := n.region.Service.Store.ListRacks(ctx)
		return err == nil && slices.ContainsFunc(rs, func(r store.Rack) bool { return slices.Equal(r.DNS, []string{rackIP}) })
	})

	lease := netns.Dhclient(t, n.cli.Name, "vc", t.TempDir(), "", "timeout 15;\ninitial-interval 1;\n"+
		"request subnet-mask, routers, domain-name-servers, domain-name, domain-search;\n", leaseEnd)
	for _, want := range []string{
		"option domain-name-servers 192.0.2.1,198.51.100.53;",
		`option domain-name "maas";`,
		`option domain-search "maas.", "lab.example.";`,
	} {
		if !strings.Contains(lease, want) {
			t.Errorf("lease lacks %s:\n%s", want, lease)
		}
	}

	// The address the lease names answers for Anvil's names.
	n.cli.Ip("addr", "add", "192.0.2.250/24", "dev", "vc")
	var out []byte
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err = exec.Command("ip", "netns", "exec", n.cli.Name, "dig", "+short", "+time=1", "+tries=1", "@"+rackIP, "www.maas", "A").CombinedOutput()
		if strings.TrimSpace(string(out)) == "192.0.2.77" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if strings.TrimSpace(string(out)) != "192.0.2.77" {
		t.Fatalf("dig @%s www.maas: %v\n%s", rackIP, err, out)
	}
}

var leaseEnd = regexp.MustCompile(`(?s)lease \{.*fixed-address.*\}`)
