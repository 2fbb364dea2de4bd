package rack_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/rack"
)

// enrolValue is the secret on any kind of config's command line (GRUB's
// quotes each argument).
var enrolValue = regexp.MustCompile(agentapi.ParamEnrol + `=([^\s'"]+)`)

// withTFTP serves TFTP at the rack's address inside the network.
func withTFTP(n *bootNet, cfg *rack.Config) {
	if err := n.srv.Do(func() (err error) {
		cfg.TFTPConn, err = net.ListenPacket("udp4", rackIP+":69")
		return err
	}); err != nil {
		n.t.Fatal(err)
	}
	cfg.TFTPSinglePort = true
}

// tftp fetches name from the rack over TFTP (RFC 1350, octet mode) from
// the client side's address ip.
func (n *bootNet) tftp(ip, name string) (string, error) {
	var out bytes.Buffer
	err := n.cli.Do(func() error {
		c, err := net.ListenPacket("udp4", ip+":0")
		if err != nil {
			return err
		}
		defer c.Close()
		rrq := append(append([]byte{0, 1}, name...), 0)
		rrq = append(append(rrq, "octet"...), 0)
		server := &net.UDPAddr{IP: net.ParseIP(rackIP), Port: 69}
		if _, err := c.WriteTo(rrq, server); err != nil {
			return err
		}
		buf := make([]byte, 1500)
		for want := uint16(1); ; want++ {
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			k, from, err := c.ReadFrom(buf)
			if err != nil {
				return err
			}
			switch op := binary.BigEndian.Uint16(buf); {
			case op == 5:
				return fmt.Errorf("tftp error: %s", bytes.TrimRight(buf[4:k], "\x00"))
			case op != 3 || binary.BigEndian.Uint16(buf[2:]) != want:
				return fmt.Errorf("tftp: unexpected packet %x", buf[:min(k, 8)])
			}
			out.Write(buf[4:k])
			if _, err := c.WriteTo([]byte{0, 4, buf[2], buf[3]}, from); err != nil {
				return err
			}
			if k-4 < 512 {
				return nil
			}
		}
	})
	return out.String(), err
}

// perMAC are the names each kind of firmware asks for a machine's own
// config by.
func perMAC(mac string) []string {
	dashes := strings.ReplaceAll(mac, ":", "-")
	return []string{"ipxe.cfg-" + mac, "ipxe.cfg-" + dashes, "grub/grub.cfg-" + mac, "grub/grub.cfg-01-" + dashes, "pxelinux.cfg/01-" + dashes}
}

// configs fetches every per-MAC config of mac from ip over HTTP and TFTP.
func (n *bootNet) configs(ip, mac string) map[string]string {
	n.t.Helper()
	out := map[string]string{}
	for _, name := range perMAC(mac) {
		out["http "+name], _ = n.config(ip, name)
		b, err := n.tftp(ip, name)
		if err != nil {
			n.t.Fatalf("tftp %s from %s: %v", name, ip, err)
		}
		out["tftp "+name] = b
	}
	return out
}

// TestEnrolSecretOnlyToTheLease performs the attack on a running region
// and a rack serving its own DHCP, in a network namespace: while a
// commissioning machine holds no lease, another address (never leased,
// or leased to another MAC) asks for its per-MAC configs over HTTP and
// TFTP, by every name firmware uses, and gets no enrolment secret, and a
// hello from there does not proceed. The machine gets its secret once the
// rack has offered it an address, and once it holds the lease, and the
// region takes it.
func TestEnrolSecretOnlyToTheLease(t *testing.T) {
	eachDB(t, func(t *testing.T, dbURL string) {
		n := newBootNet(t, dbURL, withTFTP)
		const victim, attacker = "52:54:00:c1:00:01", "52:54:00:c1:00:66"
		m, _ := n.commissioning("6f2c1f1e-0000-4000-8000-0000000000d1", victim)

		n.addr("192.0.2.50")
		own := n.lease(attacker)
		for _, ip := range []string{"192.0.2.50", own} {
			for name, body := range n.configs(ip, victim) {
				if !strings.Contains(body, "anvil.purpose=") {
					t.Fatalf("%s from %s: not the machine's config: %q", name, ip, body)
				}
				if enrolValue.MatchString(body) {
					t.Fatalf("%s from %s, while the machine holds no lease: %q", name, ip, body)
				}
			}
			hi := agentapi.HelloRequest{Identity: agentapi.Identity{MACs: []string{victim}, Arch: "amd64/generic"}, Purpose: "ephemeral"}
			if r := n.hello(ip, hi); r.Action == agentapi.ActionProceed || r.Token != "" {
				t.Fatalf("hello from %s without the secret: %+v", ip, r)
			}
		}

		// Offered an address, the machine's firmware asks at once.
		offered := n.dhcp(victim, false)
		n.addr(offered)
		want := secretFor(t, n, m.SystemID, offered)
		for name, body := range n.configs(offered, victim) {
			if got := enrolValue.FindStringSubmatch(body); got == nil || got[1] != want {
				t.Fatalf("%s from the address just offered: %q", name, body)
			}
		}
		// Leased: the same, and the region takes the secret.
		if ip := n.dhcp(victim, true); ip != offered {
			t.Fatalf("leased %s after offering %s", ip, offered)
		}
		body, _ := n.config(offered, "ipxe.cfg-"+victim)
		got := enrolValue.FindStringSubmatch(body)
		if got == nil || got[1] != want {
			t.Fatalf("the machine's own config after its lease: %q", body)
		}
		hi := agentapi.HelloRequest{Identity: agentapi.Identity{MACs: []string{victim}, Arch: "amd64/generic"}, Purpose: "ephemeral", Enrol: got[1]}
		if r := n.hello(offered, hi); r.Action != agentapi.ActionProceed {
			t.Fatalf("the machine's hello with its secret: %+v", r)
		}
	})
}

// secretFor is the enrolment secret a config served to ip should carry.
func secretFor(t *testing.T, n *bootNet, systemID, ip string) string {
	t.Helper()
	m, err := n.region.Store.GetMachine(context.Background(), systemID)
	if err != nil {
		t.Fatal(err)
	}
	if m.EnrolSecret == "" {
		t.Fatal(errors.New("the machine has no enrolment secret"))
	}
	return agentapi.EnrolFor(m.EnrolSecret, ip)
}

// TestLocalConfigEndsOnlyItsHoldersDeployment performs the attack on a
// running region and a rack serving its own DHCP: a deploying machine
// whose image is on its disk is answered with a local boot, and the
// region takes its next local config as the machine booting its disk
// (which ends the deployment for an image deployed at local boot).
// Another address asking for that config, by MAC over HTTP and TFTP, must
// count for nothing; the machine's own request, from its lease, counts.
func TestLocalConfigEndsOnlyItsHoldersDeployment(t *testing.T) {
	eachDB(t, func(t *testing.T, dbURL string) {
		n := newBootNet(t, dbURL, withTFTP)
		const victim = "52:54:00:c1:00:02"
		m, _ := n.commissioning("6f2c1f1e-0000-4000-8000-0000000000d2", victim)
		ctx := context.Background()
		// The state a deployment reaches when its image is written.
		if _, err := n.region.Store.UpdateMachine(ctx, m.SystemID, func(mm *machine.Machine) ([]machine.Event, error) {
			mm.Status, mm.Netboot = machine.Deploying, false
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the rack to answer the machine with its disk", func() bool {
			e, ok := n.rack.Cache.ByMAC(victim)
			return ok && e.Purpose == machine.BootLocal
		})
		bootedDisk := func() bool {
			for _, e := range events(t, n.admin, m.SystemID) {
				if strings.Contains(e.Type+" "+e.Description, "Booting from disk") {
					return true
				}
			}
			return false
		}

		n.addr("192.0.2.50")
		n.configs("192.0.2.50", victim)
		waitFor(t, "the rack to report the configs it served", func() bool { return n.rack.Reporter.Pending() == 0 })
		waitFor(t, "the asker's configs on the timeline", func() bool {
			for _, e := range events(t, n.admin, m.SystemID) {
				if strings.Contains(e.Description, "which does not hold "+victim) {
					return true
				}
			}
			return false
		})
		if bootedDisk() {
			t.Fatal("another address fetching the machine's local config was taken as the machine booting its disk")
		}

		ip := n.lease(victim)
		if body, _ := n.config(ip, "ipxe.cfg-"+victim); strings.Contains(body, "anvil.purpose=") {
			t.Fatalf("the machine's own config is not a local boot: %q", body)
		}
		waitFor(t, "the machine's own local boot on its timeline", bootedDisk)
	})
}
