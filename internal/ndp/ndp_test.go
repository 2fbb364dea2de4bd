package ndp

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv6"

	"github.com/anvilmetal/anvil/internal/testutil/netns"
)

// A host on the provisioning network solicits a router; the responder
// answers it with an advertisement that offers no route, no prefix and no
// DHCPv6, and answers a flood from one host once a second.
func TestAnswersSolicitation(t *testing.T) {
	ns := netns.New(t, fmt.Sprintf("anvndp%d", os.Getpid()%100000))
	if out, err := exec.Command("ip", "netns", "exec", ns.Name, "sysctl", "-qw", "net.ipv6.conf.default.accept_dad=0").CombinedOutput(); err != nil {
		t.Skipf("no IPv6 here: %v %s", err, out)
	}
	ns.Ip("link", "add", "rack0", "type", "veth", "peer", "name", "host0")
	ns.Ip("link", "set", "rack0", "up")
	ns.Ip("link", "set", "host0", "up")

	var r *Responder
	if err := ns.Do(func() (err error) { r, err = Listen("rack0", nil); return err }); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go r.Serve()

	var c *icmp.PacketConn
	if err := ns.Do(func() (err error) { c, err = icmp.ListenPacket("ip6:ipv6-icmp", "::"); return err }); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := c.IPv6PacketConn()
	host, err := ifaceIn(ns, "host0")
	if err != nil {
		t.Fatal(err)
	}
	var f ipv6.ICMPFilter
	f.SetAll(true)
	f.Accept(ipv6.ICMPTypeRouterAdvertisement)
	p.SetICMPFilter(&f)
	p.SetMulticastHopLimit(255)
	p.SetMulticastInterface(host)
	p.SetControlMessage(ipv6.FlagInterface, true)

	rs, _ := (&icmp.Message{Type: ipv6.ICMPTypeRouterSolicitation, Body: &icmp.RawBody{Data: make([]byte, 4)}}).Marshal(nil)
	solicit := func() {
		// The veth's link-local route appears a moment after both ends
		// are up: until then sending says the network is unreachable.
		for i := 0; ; i++ {
			_, err := p.WriteTo(rs, nil, &net.IPAddr{IP: allRouters.IP, Zone: "host0"})
			if err == nil {
				return
			}
			if !errors.Is(err, syscall.ENETUNREACH) || i == 100 {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	read := func() *icmp.Message {
		buf := make([]byte, 1500)
		p.SetReadDeadline(time.Now().Add(2 * time.Second))
		for {
			n, cm, _, err := p.ReadFrom(buf)
			if err != nil {
				return nil
			}
			if cm != nil && cm.IfIndex != host.Index {
				continue
			}
			m, err := icmp.ParseMessage(58, buf[:n])
			if err == nil && m.Type == ipv6.ICMPTypeRouterAdvertisement {
				return m
			}
		}
	}
	solicit()
	m := read()
	if m == nil {
		t.Fatal("no router advertisement")
	}
	body := m.Body.(*icmp.RawBody).Data
	if len(body) < 12 || body[1] != 0 || body[2] != 0 || body[3] != 0 {
		t.Fatalf("advertisement offers something: % x", body)
	}
	// A flood from the same host is answered once a second.
	for range 20 {
		solicit()
	}
	got := 0
	for read() != nil {
		got++
	}
	if got > 2 {
		t.Fatalf("%d answers to a flood of 20 within 2 s", got)
	}
}

func ifaceIn(ns *netns.NS, name string) (*net.Interface, error) {
	var ifi *net.Interface
	err := ns.Do(func() (err error) { ifi, err = net.InterfaceByName(name); return err })
	return ifi, err
}
