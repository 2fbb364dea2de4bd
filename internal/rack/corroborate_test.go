package rack_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/dhcp"
	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/ipmibmc"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/metadata"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/testutil/netns"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// bootNet is a provisioning network of the test's own: the rack serves
// DHCP and HTTP boot, and the region's metadata API listens, at
// 192.0.2.1 in one namespace; machines (and attackers) talk from another,
// across a veth pair. The region's API stays on loopback.
type bootNet struct {
	t        *testing.T
	srv, cli *netns.NS
	region   *serve.Server
	rack     *rack.Rack
	admin    *client.Client
	key      string
}

const (
	rackIP   = "192.0.2.1"
	bootBase = "http://" + rackIP + ":5248"
	mdBase   = "http://" + rackIP + ":5240"
)

// newBootNet builds the network; each more function adjusts the rack's
// configuration before it starts, with the namespaces in place.
func newBootNet(t *testing.T, dbURL string, more ...func(*bootNet, *rack.Config)) *bootNet {
	pid := os.Getpid() % 100000
	n := &bootNet{t: t, srv: netns.New(t, fmt.Sprintf("anvcrs%d", pid)), cli: netns.New(t, fmt.Sprintf("anvcrc%d", pid))}
	n.srv.Ip("link", "add", "vs", "type", "veth", "peer", "name", "vc", "netns", n.cli.Name)
	n.srv.Ip("addr", "add", rackIP+"/24", "dev", "vs")
	n.srv.Ip("link", "set", "vs", "up")
	n.cli.Ip("link", "set", "vc", "up")

	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	var err error
	n.region, err = serve.Start(ctx, serve.Config{DataDir: dir, DBURL: dbURL, Listen: "127.0.0.1:0", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.region.Close(context.Background()) })
	base := "http://" + n.region.Addr.String() + "/MAAS/"
	if n.key, err = serve.APIKey(ctx, dir, dbURL, "admin"); err != nil {
		t.Fatal(err)
	}
	if n.admin, err = client.New(base, n.key); err != nil {
		t.Fatal(err)
	}
	if _, err := n.admin.Do(ctx, "POST", "subnets/", nil, url.Values{"cidr": {"192.0.2.0/24"}, "dhcp_on": {"true"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.admin.Do(ctx, "POST", "ipranges/", nil, url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.200"}}); err != nil {
		t.Fatal(err)
	}

	// The metadata API where machines reach it: the region's own handler
	// on a listener inside the provisioning network.
	var mdLn, bootLn net.Listener
	if err := n.srv.Do(func() (err error) {
		if mdLn, err = net.Listen("tcp4", rackIP+":5240"); err != nil {
			return err
		}
		bootLn, err = net.Listen("tcp4", rackIP+":5248")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	md := &http.Server{Handler: metadata.New(n.region.Service, log, metadata.Options{}), ReadHeaderTimeout: 5 * time.Second}
	go md.Serve(mdLn)
	t.Cleanup(func() { md.Close() })

	cfg := rack.Config{
		DataDir: t.TempDir(), RegionURL: base, APIKey: n.key, HTTPBase: bootBase, HTTPListener: bootLn,
		MetadataURL: mdBase + metadata.Prefix, Log: log,
		DHCPInterface: "vs", DHCPServerIP: netip.MustParseAddr(rackIP), NoRAReply: true,
		DHCPListen: func(s *dhcp.Server) error {
			errc := make(chan error, 1)
			n.srv.Go(func() { errc <- s.ListenAndServe("vs") })
			return <-errc
		},
	}
	for _, f := range more {
		f(n, &cfg)
	}
	n.rack, err = rack.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.rack.Close() })
	waitFor(t, "the rack to learn the subnet", func() bool { return len(n.rack.Cache.Subnets()) == 1 })
	return n
}

// lease gets an address for mac from the rack's DHCP server, over UDP, as
// a machine's firmware does, and puts it on the client side.
func (n *bootNet) lease(mac string) string {
	n.t.Helper()
	ip := n.dhcp(mac, true)
	n.addr(ip)
	return ip
}

// dhcp runs DISCOVER/OFFER for mac, and REQUEST/ACK when ack is set, and
// returns the address offered (or acknowledged).
func (n *bootNet) dhcp(mac string, ack bool) string {
	n.t.Helper()
	hw, _ := net.ParseMAC(mac)
	var ip net.IP
	err := n.cli.Do(func() error {
		c, err := server4.NewIPv4UDPConn("vc", &net.UDPAddr{Port: dhcpv4.ClientPort})
		if err != nil {
			return err
		}
		defer c.Close()
		bcast := &net.UDPAddr{IP: net.IPv4bcast, Port: dhcpv4.ServerPort}
		disc, err := dhcpv4.NewDiscovery(hw)
		if err != nil {
			return err
		}
		offer, err := exchange(c, disc, bcast, dhcpv4.MessageTypeOffer)
		if err != nil {
			return fmt.Errorf("discover: %w", err)
		}
		if ip = offer.YourIPAddr; !ack {
			return nil
		}
		req, err := dhcpv4.NewRequestFromOffer(offer)
		if err != nil {
			return err
		}
		a, err := exchange(c, req, bcast, dhcpv4.MessageTypeAck)
		if err != nil {
			return fmt.Errorf("request: %w", err)
		}
		ip = a.YourIPAddr
		return nil
	})
	if err != nil {
		n.t.Fatalf("dhcp for %s: %v", mac, err)
	}
	return ip.String()
}

// addr puts an address on the client side (an attacker may take any).
func (n *bootNet) addr(ip string) { n.cli.Ip("addr", "add", ip+"/24", "dev", "vc") }

func exchange(c *net.UDPConn, m *dhcpv4.DHCPv4, to *net.UDPAddr, want dhcpv4.MessageType) (*dhcpv4.DHCPv4, error) {
	for try := 0; try < 3; try++ {
		if _, err := c.WriteTo(m.ToBytes(), to); err != nil {
			return nil, err
		}
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 1500)
		for {
			k, _, err := c.ReadFrom(buf)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			if err != nil {
				return nil, err
			}
			r, err := dhcpv4.FromBytes(buf[:k])
			if err == nil && r.TransactionID == m.TransactionID && r.MessageType() == want {
				return r, nil
			}
		}
	}
	return nil, errors.New("no answer")
}

// from is an HTTP client whose connections leave the client side from ip.
func (n *bootNet) from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	dial := func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		err = n.cli.Do(func() (err error) { c, err = d.DialContext(ctx, network, addr); return err })
		return c, err
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}

var seenParam = regexp.MustCompile(agentapi.ParamSeen + `=(\S+)`)

// config fetches a boot config from the rack over HTTP from ip, and the
// sighting on it ("" when none).
func (n *bootNet) config(ip, name string) (body, seen string) {
	n.t.Helper()
	resp, err := n.from(ip).Get(bootBase + "/" + name)
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		n.t.Fatalf("%s from %s: %d %s", name, ip, resp.StatusCode, b)
	}
	if m := seenParam.FindStringSubmatch(string(b)); m != nil {
		seen = m[1]
	}
	return string(b), seen
}

func (n *bootNet) hello(ip string, req agentapi.HelloRequest) agentapi.HelloResponse {
	n.t.Helper()
	a := &agentapi.Client{Base: mdBase + metadata.Prefix, HTTP: n.from(ip)}
	r, err := a.Hello(context.Background(), req)
	if err != nil {
		n.t.Fatalf("hello from %s: %v", ip, err)
	}
	return r
}

// commissioning creates a machine with mac behind a lab BMC with uuid,
// and commissions it: the machine is powered on, and the rack knows it
// with its enrolment secret.
func (n *bootNet) commissioning(uuid, mac string) (client.Machine, *lab.Log) {
	t := n.t
	t.Helper()
	_, log, addr := bmc(t, uuid, mac)
	m, err := n.admin.CreateMachine(context.Background(), url.Values{"hostname": {"victim"}, "mac_addresses": {mac}, "architecture": {"amd64/generic"},
		"power_type": {"ipmi"}, "power_parameters_power_address": {addr}, "power_parameters_power_user": {"admin"},
		"power_parameters_power_pass": {"secret"}, "commission": {"true"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "commissioning to power it on", func() bool { return commands(log, "power on") == 1 })
	waitFor(t, "the rack to know the machine", func() bool { e, ok := n.rack.Cache.ByMAC(mac); return ok && e.Enrol != "" })
	return m, log
}

// bmc starts a lab IPMI BMC on loopback in front of a simulated machine.
func bmc(t *testing.T, uuid string, macs ...string) (*lab.SimMachine, *lab.Log, string) {
	sim := lab.NewSim("corr", uuid, macs...)
	log := &lab.Log{}
	b := ipmibmc.New(sim, ipmibmc.Options{User: "admin", Password: "secret", Log: log})
	addr, err := b.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return sim, log, addr.String()
}

func commands(log *lab.Log, which string) int {
	n := 0
	for _, e := range log.Entries() {
		if e.Command == which {
			n++
		}
	}
	return n
}

func eachDB(t *testing.T, fn func(t *testing.T, dbURL string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "") })
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.URL(t)) })
}

// TestAnonymousHellosMoveNothing performs finding 2's attack on a running
// region and rack: hellos naming a commissioning machine's MAC, from an
// address the rack never leased, and from an attacker's own lease with
// the rack's sighting of the attacker's own boot, neither reboot the
// machine nor count for the loop guard. The machine's real wrong boot
// (its lease, the default config the rack served it) is rebooted once,
// and once only for that boot.
func TestAnonymousHellosMoveNothing(t *testing.T) {
	eachDB(t, func(t *testing.T, dbURL string) {
		n := newBootNet(t, dbURL)
		ctx := context.Background()
		const victim, attacker = "52:54:00:c0:00:01", "52:54:00:c0:00:66"
		m, log := n.commissioning("6f2c1f1e-0000-4000-8000-0000000000c1", victim)

		wrong := agentapi.HelloRequest{Identity: agentapi.Identity{MACs: []string{victim}, Arch: "amd64/generic"}, Purpose: "enlist"}
		// Never leased: no sighting.
		n.addr("192.0.2.50")
		if _, seen := n.config("192.0.2.50", "ipxe.cfg-default-amd64"); seen != "" {
			t.Fatalf("a sighting for an address the rack never leased: %s", seen)
		}
		for i := 0; i < 2; i++ {
			if r := n.hello("192.0.2.50", wrong); r.Action != agentapi.ActionPowerOff || r.WaitForBMC {
				t.Fatalf("anonymous hello %d: %+v", i, r)
			}
		}
		// The attacker's own lease and the rack's sighting of its own
		// boot do not vouch for the victim's MAC.
		ip := n.lease(attacker)
		_, seen := n.config(ip, "ipxe.cfg-default-amd64")
		if seen == "" {
			t.Fatal("no sighting for the attacker's own leased boot")
		}
		own := wrong
		own.Seen = seen
		if r := n.hello(ip, own); r.Action != agentapi.ActionPowerOff || r.WaitForBMC {
			t.Fatalf("hello with the sighting of another boot: %+v", r)
		}
		time.Sleep(time.Second) // a reboot would be queued by now
		got, err := n.region.Store.GetMachine(ctx, m.SystemID)
		if err != nil {
			t.Fatal(err)
		}
		if c := commands(log, "power cycle"); c != 0 || got.WrongBoots != 0 || got.Status.String() != "Commissioning" || len(got.Interfaces) != 1 {
			t.Fatalf("after the attack: %d power cycles, wrong boots %d, %s, %d interfaces", c, got.WrongBoots, got.Status, len(got.Interfaces))
		}
		if q, _ := n.region.Store.PowerQueue(ctx, m.SystemID); len(q) != 0 {
			t.Fatalf("power requests queued by the attack: %+v", q)
		}

		// The machine's own wrong boot: its lease, the default config.
		vip := n.lease(victim)
		_, seen = n.config(vip, "ipxe.cfg-default-amd64")
		real := wrong
		real.Seen = seen
		if r := n.hello(vip, real); r.Action != agentapi.ActionReboot || !r.WaitForBMC {
			t.Fatalf("the machine's wrong boot: %+v", r)
		}
		waitFor(t, "the reboot through its BMC", func() bool { return commands(log, "power cycle") == 1 })
		// The same boot again: no second reboot, not counted.
		if r := n.hello(vip, real); r.Action != agentapi.ActionPowerOff || r.WaitForBMC {
			t.Fatalf("the same boot twice: %+v", r)
		}
		time.Sleep(time.Second)
		got, _ = n.region.Store.GetMachine(ctx, m.SystemID)
		if c := commands(log, "power cycle"); c != 1 || got.WrongBoots != 1 {
			t.Fatalf("after one boot the rack saw: %d power cycles, wrong boots %d", c, got.WrongBoots)
		}
		// And the sighting is worth nothing from another address.
		if r := n.hello("192.0.2.50", real); r.Action != agentapi.ActionPowerOff {
			t.Fatalf("its sighting from elsewhere: %+v", r)
		}
		evs, err := n.admin.QueryEvents(ctx, url.Values{"hostname": {"victim"}, "limit": {"100"}})
		if err != nil {
			t.Fatal(err)
		}
		var all string
		for _, e := range evs.Events {
			all += e.Type + ": " + e.Description + "\n"
		}
		if !strings.Contains(all, "Uncorroborated boot") || !strings.Contains(all, "which the hello does not name") {
			t.Fatalf("the timeline does not say why:\n%s", all)
		}
	})
}

// TestBMCOnlyMachineNeedsItsOwnBoot performs finding 3's attack: hellos
// with any MAC naming the BMC of a machine added by its BMC alone get no
// token and are held, with an event saying why: without a sighting, and
// with the attacker's own lease after the power-on but an SMBIOS UUID that
// is not the system GUID the BMC gives. The machine's own boot, held
// because the rack could not vouch for it, is accepted by an
// administrator (not by another user), and its next boot proceeds.
func TestBMCOnlyMachineNeedsItsOwnBoot(t *testing.T) {
	eachDB(t, func(t *testing.T, dbURL string) {
		n := newBootNet(t, dbURL)
		ctx := context.Background()
		const real, attacker, uuid = "52:54:00:c1:00:01", "52:54:00:c1:00:66", "6f2c1f1e-0000-4000-8000-0000000000c2"
		_, log, addr := bmc(t, uuid, real)
		m, err := n.admin.CreateMachine(ctx, url.Values{"hostname": {"bmc-only"}, "architecture": {"amd64/generic"},
			"power_type": {"ipmi"}, "power_parameters_power_address": {addr}, "power_parameters_power_user": {"admin"},
			"power_parameters_power_pass": {"secret"}})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "Anvil to power it on", func() bool { return commands(log, "power on") == 1 })
		bmcInfo := &machine.BMCInfo{Type: "ipmi", Address: "127.0.0.1"}
		held := func(ip string, req agentapi.HelloRequest, why string) {
			t.Helper()
			r := n.hello(ip, req)
			if r.Action != agentapi.ActionPowerOff || r.Token != "" || r.SystemID != "" {
				t.Fatalf("hello from %s (%s): %+v", ip, why, r)
			}
			got, _ := n.region.Store.GetMachine(ctx, m.SystemID)
			if len(got.Interfaces) != 0 || got.Status.String() != "Commissioning" {
				t.Fatalf("after a held hello (%s): %d interfaces, %s", why, len(got.Interfaces), got.Status)
			}
			h, err := n.region.Store.HeldBoot(ctx, m.SystemID)
			if err != nil || !strings.Contains(h.Reason, why) {
				t.Fatalf("held boot %+v %v, want a reason with %q", h, err, why)
			}
		}
		// Any MAC, the BMC's address, nothing else.
		n.addr("192.0.2.50")
		hello := agentapi.HelloRequest{Identity: agentapi.Identity{MACs: []string{attacker}, Arch: "amd64/generic", BMC: bmcInfo}, Purpose: "enlist"}
		held("192.0.2.50", hello, "no rack saw this boot")
		// Its own lease after the power-on, the rack's sighting of its own
		// boot, but not the machine's UUID.
		aip := n.lease(attacker)
		_, hello.Seen = n.config(aip, "ipxe.cfg-default-amd64")
		held(aip, hello, "no usable SMBIOS UUID")
		time.Sleep(1100 * time.Millisecond) // a sighting is dated to the second: the next boot's is another
		_, hello.Seen = n.config(aip, "ipxe.cfg-default-amd64")
		hello.UUID = "6f2c1f1e-0000-4000-8000-0000000000ff"
		held(aip, hello, "is not the system GUID")

		// The machine's own boot, from its lease, which the rack could not
		// vouch for (no sighting): held too.
		rip := n.lease(real)
		own := agentapi.HelloRequest{Identity: agentapi.Identity{MACs: []string{real}, BootMAC: real, UUID: uuid, Arch: "amd64/generic", BMC: bmcInfo}, Purpose: "enlist"}
		held(rip, own, "no rack saw this boot")
		evs, err := n.admin.QueryEvents(ctx, url.Values{"hostname": {"bmc-only"}, "limit": {"100"}})
		if err != nil {
			t.Fatal(err)
		}
		var all string
		for _, e := range evs.Events {
			all += e.Type + ": " + e.Description + "\n"
		}
		if strings.Count(all, "Enlistment held") != 4 || !strings.Contains(all, "op=accept") {
			t.Fatalf("timeline:\n%s", all)
		}

		// Accepting is for administrators.
		if _, err := n.region.Store.EnsureUser(ctx, "alice", false); err != nil {
			t.Fatal(err)
		}
		tok, err := n.region.Store.CreateToken(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		alice, _ := client.New(n.admin.BaseURL(), tok.APIKey())
		accept := url.Values{"machines": {m.SystemID}}
		if _, err := alice.Do(ctx, "POST", "machines/", url.Values{"op": {"accept"}}, accept); err == nil || !strings.Contains(err.Error(), "403") {
			t.Fatalf("a user accepted: %v", err)
		}
		if _, err := n.admin.Do(ctx, "POST", "machines/", url.Values{"op": {"accept"}}, accept); err != nil {
			t.Fatal(err)
		}
		if _, err := n.admin.Do(ctx, "POST", "machines/", url.Values{"op": {"accept"}}, accept); err == nil || !strings.Contains(err.Error(), "no held boot") {
			t.Fatalf("accepted twice: %v", err)
		}
		got, _ := n.region.Store.GetMachine(ctx, m.SystemID)
		if len(got.Interfaces) != 1 || got.Interfaces[0].MAC != real {
			t.Fatalf("after accept: %+v", got.Interfaces)
		}
		waitFor(t, "the reboot into its own boot", func() bool { return commands(log, "power cycle") == 1 })
		// Its next boot is its own: the per-MAC config with its secret.
		waitFor(t, "the rack to know its MAC", func() bool { e, ok := n.rack.Cache.ByMAC(real); return ok && e.Enrol != "" })
		cfg, seen := n.config(rip, "ipxe.cfg-"+real)
		enrol := enrolParam.FindStringSubmatch(cfg)
		if enrol == nil || seen == "" {
			t.Fatalf("its own config:\n%s", cfg)
		}
		own.Purpose, own.Enrol, own.Seen = "ephemeral", enrol[1], seen
		if r := n.hello(rip, own); r.Action != agentapi.ActionProceed || r.Token == "" || r.SystemID != m.SystemID {
			t.Fatalf("its next boot: %+v", r)
		}
	})
}

// TestBMCOnlyMachineFoundByItsBoot: the seed behaviour stays. A machine
// added by its BMC alone enlists from its first boot without anyone
// typing a MAC, when the boot is corroborated: the rack leased and served
// it after Anvil powered the BMC on, and its SMBIOS UUID is the BMC's
// system GUID.
func TestBMCOnlyMachineFoundByItsBoot(t *testing.T) {
	eachDB(t, func(t *testing.T, dbURL string) {
		n := newBootNet(t, dbURL)
		ctx := context.Background()
		const mac, uuid = "52:54:00:c2:00:01", "6f2c1f1e-0000-4000-8000-0000000000c3"
		_, log, addr := bmc(t, uuid, mac)
		m, err := n.admin.CreateMachine(ctx, url.Values{"hostname": {"found"}, "architecture": {"amd64/generic"},
			"power_type": {"ipmi"}, "power_parameters_power_address": {addr}, "power_parameters_power_user": {"admin"},
			"power_parameters_power_pass": {"secret"}})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "Anvil to power it on", func() bool { return commands(log, "power on") == 1 })
		ip := n.lease(mac)
		_, seen := n.config(ip, "ipxe.cfg-default-amd64")
		r := n.hello(ip, agentapi.HelloRequest{Identity: agentapi.Identity{MACs: []string{mac}, BootMAC: mac, UUID: uuid, Arch: "amd64/generic",
			BMC: &machine.BMCInfo{Type: "ipmi", Address: "127.0.0.1"}, Seen: seen}, Purpose: "enlist"})
		if r.Action != agentapi.ActionProceed || r.Token == "" || r.SystemID != m.SystemID || !strings.Contains(r.Message, "system GUID") {
			t.Fatalf("its first boot: %+v", r)
		}
		got, _ := n.region.Store.GetMachine(ctx, m.SystemID)
		if len(got.Interfaces) != 1 || got.Interfaces[0].MAC != mac || got.HardwareUUID != uuid {
			t.Fatalf("learned %+v %s", got.Interfaces, got.HardwareUUID)
		}
	})
}
