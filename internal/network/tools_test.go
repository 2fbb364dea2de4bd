package network

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// What the real tools must write for each shape: file (a glob under the
// output directory) → lines it must hold.
var netplanWants = map[string]map[string][]string{
	"dhcp":   {"run/systemd/network/10-netplan-eth0.network": {"PermanentMACAddress=52:54:00:00:00:01", "DHCP=ipv4"}},
	"static": {"run/systemd/network/10-netplan-eth0.network": {"Address=192.0.2.10/24", "Gateway=192.0.2.1", "DNS=192.0.2.2", "192.0.2.53", "Domains=maas example.com"}},
	"bond-vlan": {
		"run/systemd/network/10-netplan-bond0.netdev":     {"Kind=bond", "Mode=802.3ad", "LACPTransmitRate=fast", "TransmitHashPolicy=layer3+4", "MIIMonitorSec=100ms"},
		"run/systemd/network/10-netplan-eth0.network":     {"Bond=bond0"},
		"run/systemd/network/10-netplan-eth1.network":     {"Bond=bond0"},
		"run/systemd/network/10-netplan-bond0.100.netdev": {"Kind=vlan", "Id=100"},
		"run/systemd/network/10-netplan-bond0.100.network": {"Address=198.51.100.10/24", "Gateway=198.51.100.1",
			"Destination=198.18.10.0/24", "Gateway=198.51.100.254", "Metric=100"},
	},
	"bridge-bond": {
		"run/systemd/network/10-netplan-bond0.netdev":  {"Mode=active-backup", "UpDelaySec=200ms"},
		"run/systemd/network/10-netplan-bond0.network": {"Bridge=br0"},
		"run/systemd/network/10-netplan-br0.netdev":    {"Kind=bridge", "STP=true", "ForwardDelaySec=4"},
		"run/systemd/network/10-netplan-br0.network":   {"Address=192.0.2.20/24", "Gateway=192.0.2.1"},
	},
	"bridge-ovs": {
		"run/systemd/system/netplan-ovs-br-ex.service": {"ovs-vsctl --may-exist add-br br-ex", "ovs-vsctl --may-exist add-port br-ex eth0"},
		"run/systemd/network/10-netplan-br-ex.network": {"Address=192.0.2.30/24", "Gateway=192.0.2.1"},
	},
	"two-families": {
		"run/systemd/network/10-netplan-eth0.network": {"Address=192.0.2.10/24", "Address=2001:db8::10/64", "Gateway=192.0.2.1", "Gateway=2001:db8::1"},
		"run/systemd/network/10-netplan-eth1.network": {"Address=198.18.0.1/24", "MTUBytes=9000"},
	},
}

// Debian 12's cloud-init writes ifupdown's interfaces file (its renderer
// when ifupdown is installed, as debootstrap installs it).
var eniWants = map[string][]string{
	"dhcp":        {"iface eth0 inet dhcp"},
	"static":      {"iface eth0 inet static", "address 192.0.2.10/24", "gateway 192.0.2.1", "dns-nameservers 192.0.2.2 192.0.2.53", "dns-search maas example.com"},
	"bond-vlan":   {"bond-master bond0", "bond-mode 802.3ad", "iface bond0.100 inet static", "vlan_id 100", "vlan-raw-device bond0", "address 198.51.100.10/24", "route add -net 198.18.10.0/24 gw 198.51.100.254"},
	"bridge-bond": {"bond-mode active-backup", "iface br0 inet static", "bridge_ports bond0", "bridge_stp on", "bridge_fd 4", "address 192.0.2.20/24"},
	// cloud-init 22.4 writes an OVS bridge as a kernel bridge.
	"bridge-ovs":   {"iface br-ex inet static", "bridge_ports eth0", "address 192.0.2.30/24"},
	"two-families": {"iface eth0 inet static", "address 192.0.2.10/24", "iface eth0 inet6 static", "address 2001:db8::10/64", "gateway 2001:db8::1", "mtu 9000"},
}

func need(t *testing.T, bin, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(bin)
	if err != nil {
		t.Skipf("%s not installed (apt-get install %s)", bin, pkg)
	}
	return p
}

// TestNetplanGenerate gives each rendered shape to netplan as
// /etc/netplan/50-cloud-init.yaml and reads the networkd files it writes.
func TestNetplanGenerate(t *testing.T) {
	netplan := need(t, "netplan", "netplan.io")
	for name, m := range shapes() {
		t.Run(name, func(t *testing.T) {
			if name == "bridge-ovs" {
				// netplan wants ovs-vsctl to write an OVS bridge's units.
				need(t, "ovs-vsctl", "openvswitch-switch")
			}
			y, err := Render(site(), m, renderOpts)
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "etc/netplan"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "etc/netplan/50-cloud-init.yaml"), y, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(netplan, "generate", "--root-dir", root).CombinedOutput()
			if err != nil {
				t.Fatalf("netplan generate: %v\n%s\n%s", err, out, y)
			}
			checkFiles(t, root, netplanWants[name])
		})
	}
}

// TestCloudInitNetConvert gives each rendered shape to cloud-init's own
// converter, to ifupdown's format (Debian 12's renderer) and to networkd.
func TestCloudInitNetConvert(t *testing.T) {
	ci := need(t, "cloud-init", "cloud-init")
	for name, m := range shapes() {
		t.Run(name, func(t *testing.T) {
			y, err := Render(site(), m, renderOpts)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			in := filepath.Join(dir, "network-config")
			if err := os.WriteFile(in, y, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, kind := range []string{"eni", "networkd"} {
				out, err := exec.Command(ci, "devel", "net-convert", "-p", in, "-k", "yaml",
					"-d", filepath.Join(dir, kind), "-D", "debian", "-O", kind).CombinedOutput()
				if err != nil || strings.Contains(string(out), "Traceback") {
					t.Fatalf("net-convert -O %s: %v\n%s\n%s", kind, err, out, y)
				}
			}
			checkFiles(t, dir, map[string][]string{"eni/etc/network/interfaces.d/50-cloud-init": eniWants[name]})
		})
	}
}

func checkFiles(t *testing.T, root string, want map[string][]string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("no expectations for this shape")
	}
	for file, lines := range want {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		have := map[string]bool{}
		for _, l := range strings.Split(string(b), "\n") {
			have[strings.TrimSpace(l)] = true
		}
		for _, l := range lines {
			if !have[l] && !strings.Contains(string(b), l) {
				t.Errorf("%s lacks %q:\n%s", file, l, b)
			}
		}
	}
}

// TestToolsAcceptGenerated gives netplan (and, for a few, cloud-init)
// machines the fuzz builder makes from a fixed seed, those that render:
// what Render accepts, the tools accept.
func TestToolsAcceptGenerated(t *testing.T) {
	netplan := need(t, "netplan", "netplan.io")
	ci := need(t, "cloud-init", "cloud-init")
	need(t, "ovs-vsctl", "openvswitch-switch") // some are OVS bridges
	rng := rand.New(rand.NewSource(1))
	checked := 0
	for k := 0; k < 20000 && checked < 16; k++ {
		b := make([]byte, 60)
		rng.Read(b)
		for j := range b {
			if rng.Intn(3) == 0 {
				b[j] = 0
			}
		}
		y, err := Render(site(), machineFrom(b), renderOpts)
		if err != nil {
			continue
		}
		checked++
		root := t.TempDir()
		in := filepath.Join(root, "etc/netplan/50-cloud-init.yaml")
		if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(in, y, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(netplan, "generate", "--root-dir", root).CombinedOutput(); err != nil {
			t.Errorf("netplan generate: %v\n%s\n%s", err, out, y)
		}
		if checked%8 == 0 {
			out, err := exec.Command(ci, "devel", "net-convert", "-p", in, "-k", "yaml", "-d", filepath.Join(root, "eni"), "-D", "debian", "-O", "eni").CombinedOutput()
			if err != nil {
				t.Errorf("net-convert: %v\n%s\n%s", err, out, y)
			}
		}
	}
	if checked < 16 {
		t.Fatalf("only %d generated machines render", checked)
	}
}
