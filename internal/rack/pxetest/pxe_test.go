package pxetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/dhcp"
	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/testutil/initramfs"
	"github.com/anvilmetal/anvil/internal/testutil/netns"
)

// initScript reports the purpose Anvil rendered onto the kernel command
// line, then powers the machine off.
const initScript = `#!/bin/sh
/bin/mount -t devtmpfs devtmpfs /dev
/bin/mount -t proc proc /proc
for w in $(cat /proc/cmdline); do case $w in anvil.purpose=*) p=${w#anvil.purpose=};; esac; done
echo "ANVIL-BOOT-OK purpose=$p" > /dev/console
echo "ANVIL-BOOT-OK purpose=$p" > /dev/ttyS0
/bin/poweroff -f
`

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func kernel(t *testing.T) string {
	ks, _ := filepath.Glob("/boot/vmlinuz-*")
	if len(ks) == 0 {
		t.Skip("no kernel in /boot (package linux-image-amd64; scripts/test.sh installs it)")
	}
	return ks[len(ks)-1]
}

// site is a region on loopback and a rack serving DHCP, TFTP and HTTP
// boot on a bridge in the test's own namespace, with the busybox
// initramfs of initScript as the ephemeral environment.
type site struct {
	ns   *netns.NS
	srv  *serve.Server
	cl   *client.Client
	rk   *rack.Rack
	base string
	// regionUp is cleared by a test that stops the region itself.
	regionUp bool
}

func newSite(t *testing.T, taps ...string) *site {
	return newSiteWith(t, nil, taps...)
}

// newSiteWith is newSite with the rack's configuration adjusted by tune
// and, when loaders is set, Debian's boot loaders in the rack's boot
// directory under the names DHCP hands out.
func newSiteWith(t *testing.T, tune func(*rack.Config, string), taps ...string) *site {
	if testing.Short() {
		t.Skip("boots QEMU machines")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed")
	}
	kern := kernel(t)
	s := &site{ns: netns.New(t, fmt.Sprintf("anvpxe%d", os.Getpid()))}
	s.ns.Bridge("br0", "192.0.2.1/24", taps...)
	ctx := context.Background()

	// Region, on loopback in the test's own namespace.
	srv, err := serve.Start(ctx, serve.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s.srv, s.regionUp = srv, true
	t.Cleanup(func() {
		if s.regionUp {
			_ = srv.Close(ctx)
		}
	})
	key, err := serve.APIKey(ctx, srv.DataDir(), "", "rack")
	if err != nil {
		t.Fatal(err)
	}
	s.base = "http://" + srv.Addr.String() + "/MAAS/"
	if s.cl, err = client.New(s.base, key); err != nil {
		t.Fatal(err)
	}
	// The subnet and its dynamic range are managed through the API; the
	// rack's DHCP server takes them from the boot stream.
	if _, err := s.cl.Do(ctx, "POST", "subnets/", nil, url.Values{"cidr": {"192.0.2.0/24"}, "dhcp_on": {"true"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.cl.Do(ctx, "POST", "ipranges/", nil, url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.200"}}); err != nil {
		t.Fatal(err)
	}

	// Rack, serving inside the namespace.
	rackDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(rackDir, "boot", "ephemeral"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyTo(t, kern, filepath.Join(rackDir, "boot", "ephemeral", "vmlinuz"))
	tree, err := initramfs.Busybox(initScript)
	if err != nil {
		t.Skip(err)
	}
	var rd bytes.Buffer
	if err := initramfs.Write(&rd, tree); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rackDir, "boot", "ephemeral", "initrd.img"), rd.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var tftpConn net.PacketConn
	var httpLn net.Listener
	if err := s.ns.Do(func() (err error) {
		if tftpConn, err = net.ListenPacket("udp4", "192.0.2.1:69"); err != nil {
			return err
		}
		httpLn, err = net.Listen("tcp4", "192.0.2.1:5248")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rc := rack.Config{
		DataDir: rackDir, RegionURL: s.base, APIKey: key, HTTPBase: "http://192.0.2.1:5248",
		TFTPConn: tftpConn, HTTPListener: httpLn, Log: quiet,
		DHCPInterface: "br0", DHCPServerIP: netip.MustParseAddr("192.0.2.1"),
		DHCPListen: func(d *dhcp.Server) error {
			errc := make(chan error, 1)
			s.ns.Go(func() { errc <- d.ListenAndServe("br0") })
			return <-errc
		},
	}
	if tune != nil {
		tune(&rc, filepath.Join(rackDir, "boot"))
	}
	s.rk, err = rack.Start(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.rk.Close() })
	return s
}

// machine is a QEMU machine on tap that boots from the network first,
// every time, as MAAS sites set their servers; disk may be "".
func (s *site) machine(t *testing.T, name, mac, tap, firmware, disk string) *lab.QEMUMachine {
	t.Helper()
	return s.machineWith(t, name, mac, tap, firmware, disk, false)
}

// machineWith is machine, without the NIC's iPXE ROM when noROM is set
// (the firmware's own network boot).
func (s *site) machineWith(t *testing.T, name, mac, tap, firmware, disk string, noROM bool) *lab.QEMUMachine {
	t.Helper()
	m, err := lab.NewQEMU(lab.QEMUConfig{
		ID: name, UUID: "6f2c1f1e-0000-4000-8000-00000000000" + name[len(name)-1:], MACs: []string{mac},
		NetDevs: []string{tap}, Netns: s.ns.Name, Memory: 512, StateDir: t.TempDir(), Firmware: firmware, Disk: disk,
		NoNICROM: noROM,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := m.SetBootDevice("network", true, false); err != nil {
		t.Fatal(err)
	}
	return m
}

// waitSerial waits until the machine's serial console shows want.
func waitSerial(t *testing.T, m *lab.QEMUMachine, want string, d time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		out, _ := os.ReadFile(m.SerialLog())
		if strings.Contains(string(out), want) {
			return string(out)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never printed %q; serial console:\n%s", m.ID(), want, tail(out, 3000))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestPXEBootFromAnvil: an unknown machine gets the default (enlist)
// config; a known machine gets its own config, even with the region
// stopped; both load Anvil's kernel and initrd over HTTP and run /init.
func TestPXEBootFromAnvil(t *testing.T) {
	s := newSite(t, "tap0", "tap1")
	ctx := context.Background()
	srv, cl := s.srv, s.cl
	const knownMAC, unknownMAC = "52:54:00:12:34:56", "52:54:00:65:43:21"
	if _, err := cl.CreateMachine(ctx, url.Values{"hostname": {"known"}, "mac_addresses": {knownMAC}}); err != nil {
		t.Fatal(err)
	}
	rk := s.rk
	waitFor(t, "the rack to learn the known machine and the subnet", 10*time.Second, func() bool {
		_, ok := rk.Cache.ByMAC(knownMAC)
		return ok && len(rk.Cache.Subnets()) == 1
	})

	boot := func(name, mac, tap, firmware, want string) {
		t.Helper()
		m := s.machine(t, name, mac, tap, firmware, "")
		if err := m.PowerOn(); err != nil {
			t.Fatal(err)
		}
		waitSerial(t, m, want, 4*time.Minute)
		m.Close()
	}
	boot("vm1", unknownMAC, "tap1", "bios", "ANVIL-BOOT-OK purpose=enlist")
	// The unknown machine is listed, with the address DHCP gave it.
	waitFor(t, "the unknown MAC to be discovered", 15*time.Second, func() bool {
		b, err := cl.Do(ctx, "GET", "discoveries/", nil, nil)
		return err == nil && strings.Contains(string(b), unknownMAC) && strings.Contains(string(b), "192.0.2.1")
	})

	// The region stops; the rack still answers the known machine.
	s.regionUp = false
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	boot("vm2", knownMAC, "tap0", "bios", "ANVIL-BOOT-OK purpose=ephemeral")

	// The region comes back: the boot steps the rack saw while it was
	// away reach the machine's timeline.
	srv2, err := serve.Start(ctx, serve.Config{DataDir: srv.DataDir(), Listen: srv.Addr.String(), Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv2.Close(ctx) })
	waitFor(t, "the boot events of the known machine", 30*time.Second, func() bool {
		page, err := cl.QueryEvents(ctx, url.Values{"hostname": {"known"}, "limit": {"100"}})
		if err != nil {
			return false
		}
		var all string
		for _, e := range page.Events {
			all += e.Type + ": " + e.Description + "\n"
		}
		return strings.Contains(all, "Boot dhcp: ack") && strings.Contains(all, "Boot config: config ipxe.cfg-") &&
			strings.Contains(all, "Boot http: sent ephemeral/vmlinuz")
	})
	// UEFI firmware (OVMF) with iPXE's EFI driver: the same known machine.
	boot("vm3", knownMAC, "tap0", "efi", "ANVIL-BOOT-OK purpose=ephemeral")
}

func copyTo(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
