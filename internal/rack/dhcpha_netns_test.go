package rack_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/dhcp"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/testutil/netns"
)

// TestTwoRacksShareDHCP: a VLAN's primary and secondary rack serve its
// subnet from one bridge. ISC dhclient clients get distinct addresses,
// each from the share of the rack that answered; when the primary stops,
// its client rebinding at T2 keeps its address from the secondary, and
// with the region stopped too a rebooting client of the primary keeps
// its address, while a new client gets one of the secondary's.
func TestTwoRacksShareDHCP(t *testing.T) {
	if _, err := exec.LookPath("dhclient"); err != nil {
		t.Skip("needs dhclient (Debian isc-dhcp-client)")
	}
	eachDB(t, twoRacksShareDHCP)
}

const (
	primaryIP, secondaryIP = "192.0.2.1", "192.0.2.2"
)

// haNet is one bridge with a namespace per rack and per client.
type haNet struct {
	t      *testing.T
	br     *netns.NS
	dir    string
	region *serve.Server
	admin  *client.Client
	key    string
	log    *slog.Logger
}

func twoRacksShareDHCP(t *testing.T, dbURL string) {
	n := newHANet(t, dbURL)
	ctx := context.Background()
	for _, f := range []struct {
		path string
		form url.Values
	}{
		{"subnets/", url.Values{"cidr": {"192.0.2.0/24"}}},
		{"ipranges/", url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.119"}}},
	} {
		if _, err := n.admin.Do(ctx, "POST", f.path, nil, f.form); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := n.admin.Do(ctx, "PUT", "fabrics/0/vlans/0/", nil, url.Values{"dhcp_on": {"true"}}); err != nil {
		t.Fatal(err)
	}
	ra, rb := n.rack("a", primaryIP), n.rack("b", secondaryIP)
	waitFor(t, "the racks to follow the region", func() bool {
		// The region's own rack (its power worker) is listed too.
		rs, err := n.region.Service.Store.ListRacks(ctx)
		return err == nil && len(slices.DeleteFunc(rs, func(r store.Rack) bool { return !strings.HasPrefix(r.Hostname, "rack-") })) == 2
	})
	if _, err := n.admin.Do(ctx, "PUT", "fabrics/0/vlans/0/", nil, url.Values{"primary_rack": {"rack-a"}, "secondary_rack": {"rack-b"}}); err != nil {
		t.Fatal(err)
	}
	for r, role := range map[*rack.Rack]string{ra: "primary", rb: "secondary"} {
		waitFor(t, "the "+role+"'s share", func() bool {
			ss := r.Cache.Subnets()
			return len(ss) == 1 && ss[0].Role == role
		})
	}
	share := map[string]dhcp.Range{
		primaryIP:   {Start: netip.MustParseAddr("192.0.2.100"), End: netip.MustParseAddr("192.0.2.109")},
		secondaryIP: {Start: netip.MustParseAddr("192.0.2.110"), End: netip.MustParseAddr("192.0.2.119")},
	}

	// Clients 2 and 5 reach only the primary (the secondary's port is
	// down), 3 only the secondary, 4 and 6 both. Client 2 renews every
	// 2 s and rebinds at 4 s, so it rebinds soon after the primary stops.
	got := map[string]string{} // address → client
	lease := func(i int, only string, d *netns.DhclientRun) (ip, server string) {
		t.Helper()
		ip, server = lastLease(d.Wait(hasLease, 30*time.Second))
		if prev, dup := got[ip]; dup {
			t.Fatalf("client %d got %s, which client %s holds", i, ip, prev)
		}
		got[ip] = fmt.Sprint(i)
		if sh, ok := share[server]; !ok || !sh.Contains(netip.MustParseAddr(ip)) || (only != "" && server != only) {
			t.Fatalf("client %d got %s from %s, outside that rack's share %v", i, ip, server, sh)
		}
		return ip, server
	}
	n.portDown("b")
	c2 := n.client(2, fastRenew)
	ip2, _ := lease(2, primaryIP, c2)
	c5 := n.client(5, "")
	ip5, _ := lease(5, primaryIP, c5)
	c5.Stop() // keeps its lease, as a machine that powers off
	n.portUp("b")
	n.portDown("a")
	lease(3, secondaryIP, n.client(3, ""))
	n.portUp("a")
	lease(4, "", n.client(4, ""))
	lease(6, "", n.client(6, ""))

	knows := func(r *rack.Rack, mac, ip string) func() bool {
		return func() bool {
			for _, l := range r.DHCP.PeerLeases() {
				if l.MAC.String() == mac && l.IP.String() == ip {
					return true
				}
			}
			return false
		}
	}
	waitFor(t, "the secondary to learn the primary's leases", func() bool {
		return knows(rb, clientMAC(2), ip2)() && knows(rb, clientMAC(5), ip5)()
	})

	// The primary stops: its client rebinds to the secondary, same address.
	if err := ra.Close(); err != nil {
		t.Fatal(err)
	}
	acked := regexp.MustCompile(`DHCPACK of ([0-9.]+) from ` + regexp.QuoteMeta(secondaryIP))
	if m := acked.FindStringSubmatch(c2.WaitOutput(acked.MatchString, 30*time.Second)); m[1] != ip2 {
		t.Fatalf("client 2 rebound to %s, had %s:\n%s", m[1], ip2, c2.Output())
	}
	// The secondary reports the lease it now holds, for the primary's
	// return.
	waitFor(t, "the region to hear of the secondary's lease", func() bool {
		ls, _ := n.region.Service.Store.RackLeases(ctx, time.Now())
		for _, l := range ls {
			if l.MAC == clientMAC(2) && l.IP == ip2 && rackName(t, n, l.RackID) == "rack-b" {
				return true
			}
		}
		return false
	})

	// The region goes too. The secondary answers from what it knows: the
	// primary's rebooting client keeps its address (INIT-REBOOT), a new
	// client gets one of the secondary's own.
	if err := n.region.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ip, server := lastLease(n.client(5, "").Wait(func(ls string) bool {
		_, server := lastLease(ls)
		return server == secondaryIP
	}, 30*time.Second))
	if ip != ip5 || server != secondaryIP {
		t.Fatalf("client 5 rebooted to %s from %s, had %s", ip, server, ip5)
	}
	lease(7, secondaryIP, n.client(7, ""))
	if st := rb.DHCP.Stats(); st.Drops[dhcp.DropPoolFull] != 0 {
		t.Errorf("the secondary ran out of addresses: %+v", st)
	}
}

// fastRenew makes a client renew every 2 s and rebind at 4 s, whatever
// lease the server gives.
const fastRenew = "supersede dhcp-renewal-time 2;\nsupersede dhcp-rebinding-time 4;\n"

func newHANet(t *testing.T, dbURL string) *haNet {
	pid := os.Getpid() % 100000
	n := &haNet{t: t, br: netns.New(t, fmt.Sprintf("anvha%db", pid)), dir: t.TempDir(), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	n.br.Ip("link", "add", "br0", "type", "bridge")
	n.br.Ip("link", "set", "br0", "up")
	ctx := context.Background()
	var err error
	data := t.TempDir()
	if n.region, err = serve.Start(ctx, serve.Config{DataDir: data, DBURL: dbURL, Listen: "127.0.0.1:0", Log: n.log}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.region.Close(context.Background()) })
	if n.key, err = serve.APIKey(ctx, data, dbURL, "admin"); err != nil {
		t.Fatal(err)
	}
	if n.admin, err = client.New("http://"+n.region.Addr.String()+"/MAAS/", n.key); err != nil {
		t.Fatal(err)
	}
	// The clients' script puts the address on the interface, so that
	// renewals and the server's unicast answers reach them.
	script := "#!/bin/sh\ncase \"$reason\" in BOUND|RENEW|REBIND|REBOOT)\n" +
		"  ip addr flush dev \"$interface\" scope global\n  ip addr add \"$new_ip_address/24\" dev \"$interface\";;\nesac\n"
	if err := os.WriteFile(filepath.Join(n.dir, "script"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return n
}

// rack starts rack-<name> in a namespace of its own on the bridge, at ip.
func (n *haNet) rack(name, ip string) *rack.Rack {
	ns := netns.New(n.t, n.br.Name+name)
	n.br.Plug("br0", "p"+name, ns, "eth0", "", ip+"/24")
	r, err := rack.Start(context.Background(), rack.Config{
		DataDir: n.t.TempDir(), RegionURL: "http://" + n.region.Addr.String() + "/MAAS/", APIKey: n.key,
		Hostname: "rack-" + name, HTTPBase: "http://" + ip + ":5248", Log: n.log,
		DHCPInterface: "eth0", DHCPServerIP: netip.MustParseAddr(ip), NoRAReply: true,
		DHCPListen: func(s *dhcp.Server) error {
			errc := make(chan error, 1)
			ns.Go(func() { errc <- s.ListenAndServe("eth0") })
			return <-errc
		},
	})
	if err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(func() { r.Close() })
	return r
}

func (n *haNet) portDown(name string) { n.br.Ip("link", "set", "p"+name, "down") }
func (n *haNet) portUp(name string)   { n.br.Ip("link", "set", "p"+name, "up") }

func clientMAC(i int) string { return fmt.Sprintf("52:54:00:0d:00:%02x", i) }

// client starts dhclient for client i, in its namespace (made, and wired
// to the bridge, the first time); a second start of one client finds its
// lease file.
func (n *haNet) client(i int, conf string) *netns.DhclientRun {
	name := fmt.Sprintf("%sc%d", n.br.Name, i)
	if exec.Command("ip", "netns", "pids", name).Run() != nil {
		ns := netns.New(n.t, name)
		n.br.Plug("br0", fmt.Sprintf("pc%d", i), ns, "eth0", clientMAC(i), "")
	}
	return netns.StartDhclient(n.t, name, "eth0", n.dir, fmt.Sprint(i), "timeout 30;\ninitial-interval 1;\n"+conf, filepath.Join(n.dir, "script"))
}

var (
	leaseAddr   = regexp.MustCompile(`fixed-address ([0-9.]+);`)
	leaseServer = regexp.MustCompile(`option dhcp-server-identifier ([0-9.]+);`)
)

func hasLease(ls string) bool { return leaseAddr.MatchString(ls) }

// lastLease is the address and server of the lease dhclient wrote last.
func lastLease(ls string) (ip, server string) {
	i := strings.LastIndex(ls, "lease {")
	if i < 0 {
		return "", ""
	}
	if m := leaseAddr.FindStringSubmatch(ls[i:]); m != nil {
		ip = m[1]
	}
	if m := leaseServer.FindStringSubmatch(ls[i:]); m != nil {
		server = m[1]
	}
	return ip, server
}

func rackName(t *testing.T, n *haNet, id string) string {
	rs, err := n.region.Service.Store.ListRacks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.SystemID == id {
			return r.Hostname
		}
	}
	return ""
}
