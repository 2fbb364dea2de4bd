package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/debimage"
	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/ipmisim"
)

// TestDeployDebianNetworkAndStorage deploys the README's Debian image the
// way servers run: a UEFI machine with three NICs on two fabrics and two
// disks. Through MAAS's API it gets an active-backup bond of NICs 1 and 2
// (AUTO on the provisioning subnet), VLAN 100 on the bond with a STATIC
// address, NIC 3 AUTO on another subnet, and a custom layout: the ESP on
// the first disk, RAID 1 across both for /boot, LVM on RAID 1 for / and
// swap. The test logs in over SSH at the static address and reads the
// bond, the VLAN, the addresses and routes, the mounts, arrays and volumes;
// cuts the active bond member and is still let in; reboots the machine
// from inside and logs in again (it booted its disk); releases it and sees
// the AUTO address freed.
func TestDeployDebianNetworkAndStorage(t *testing.T) {
	taps := []string{"tapR0", "tapR1", "tapR2"}
	s, img, sshKey, pub := realOSSite(t, "30", taps[:2])
	// The second fabric: its own bridge. VLAN 100 rides br0 tagged, and
	// the namespace has an address on it.
	s.ns.Bridge("br1", "198.51.100.1/24", taps[2])
	s.ns.VLAN("br0", 100, "198.18.100.1/24", "vl100")

	macs := []string{"52:54:00:0e:01:01", "52:54:00:0e:01:02", "52:54:00:0e:01:03"}
	qc := lab.QEMUConfig{MACs: macs, NetDevs: taps, Memory: 1024, Firmware: "efi"}
	b := s.machineWith("vmR", "192.0.2.30", "02:00:00:00:00:30", "6f2c1f1e-0000-4000-8000-0000000000a1", qc, 6<<10, 6<<10)
	form := s.ipmiParams(b)
	form.Set("hostname", "row-r-u1")
	var m apiMachine
	s.api("POST", "machines/", form, &m)
	id := m.SystemID
	long := 15 * time.Minute
	// The install regenerates the initramfs for RAID and LVM: under TCG
	// that alone takes most of a quarter of an hour.
	install := 45 * time.Minute
	s.waitStatus(id, "Ready", long, b)
	n := "nodes/" + id + "/"

	// Commissioning put NICs 1 and 2 on the provisioning subnet's VLAN and
	// NIC 3, seen on no known subnet, on a fabric of its own.
	prov := s.subnet("192.0.2.0/24")
	ifs := s.interfaces(id)
	nic := func(mac string) apiIface {
		t.Helper()
		for _, i := range ifs {
			if i.MAC == mac && i.Type == "physical" {
				return i
			}
		}
		t.Fatalf("no physical interface %s: %+v", mac, ifs)
		return apiIface{}
	}
	n1, n2, n3 := nic(macs[0]), nic(macs[1]), nic(macs[2])
	if n1.VLAN == nil || n2.VLAN == nil || n3.VLAN == nil || n1.VLAN.ID != prov.VLAN.ID || n2.VLAN.ID != prov.VLAN.ID ||
		n3.VLAN.FabricID == prov.VLAN.FabricID {
		t.Fatalf("commissioning placed the NICs on %+v %+v %+v; the provisioning VLAN is %+v", n1.VLAN, n2.VLAN, n3.VLAN, prov.VLAN)
	}

	var v100 struct {
		ID int `json:"id"`
	}
	s.api("POST", fmt.Sprintf("fabrics/%d/vlans/", prov.VLAN.FabricID), url.Values{"vid": {"100"}, "name": {"storage"}}, &v100)
	var tagged, other apiSubnet
	s.api("POST", "subnets/", url.Values{"cidr": {"198.18.100.0/24"}, "vlan": {strconv.Itoa(v100.ID)}}, &tagged)
	s.api("POST", "subnets/", url.Values{"cidr": {"198.51.100.0/24"}, "vlan": {strconv.Itoa(n3.VLAN.ID)},
		"gateway_ip": {"198.51.100.1"}}, &other)
	s.api("POST", "ipranges/", url.Values{"type": {"reserved"}, "start_ip": {"198.51.100.1"}, "end_ip": {"198.51.100.9"},
		"subnet": {strconv.Itoa(other.ID)}, "comment": {"the namespace's side"}}, nil)

	// Another node (a device with a STATIC address, as Juju registers a
	// container) and a DNS record check names beyond the machine's own.
	var peer struct {
		SystemID   string `json:"system_id"`
		Interfaces []struct {
			ID int `json:"id"`
		} `json:"interface_set"`
	}
	s.api("POST", "devices/", url.Values{"hostname": {"peer-node"}, "mac_addresses": {"52:54:00:0e:09:09"}}, &peer)
	if len(peer.Interfaces) != 1 {
		t.Fatalf("device: %+v", peer)
	}
	s.api("POST", fmt.Sprintf("nodes/%s/interfaces/%d/?op=link_subnet", peer.SystemID, peer.Interfaces[0].ID),
		url.Values{"mode": {"STATIC"}, "subnet": {strconv.Itoa(prov.ID)}, "ip_address": {"192.0.2.77"}}, nil)
	s.api("POST", "dnsresources/", url.Values{"fqdn": {"peer.maas"}, "ip_addresses": {"198.51.100.77"}}, nil)

	var bond, vlanIf apiIface
	s.api("POST", n+"interfaces/?op=create_bond", url.Values{"name": {"bond0"}, "parents": {strconv.Itoa(n1.ID), strconv.Itoa(n2.ID)},
		"bond_mode": {"active-backup"}, "bond_miimon": {"100"}, "vlan": {strconv.Itoa(prov.VLAN.ID)}}, &bond)
	// AUTO, not DHCP, on the bond: under Debian's ifupdown a bond is
	// brought up before its members join it (ifenslave), so dhclient
	// would run on an empty bond with a made-up MAC (see the README).
	s.api("POST", fmt.Sprintf("%sinterfaces/%d/?op=link_subnet", n, bond.ID), url.Values{"mode": {"AUTO"}, "subnet": {strconv.Itoa(prov.ID)}}, nil)
	s.api("POST", n+"interfaces/?op=create_vlan", url.Values{"vlan": {strconv.Itoa(v100.ID)}, "parent": {strconv.Itoa(bond.ID)}}, &vlanIf)
	s.api("POST", fmt.Sprintf("%sinterfaces/%d/?op=link_subnet", n, vlanIf.ID), url.Values{"mode": {"STATIC"},
		"subnet": {strconv.Itoa(tagged.ID)}, "ip_address": {"198.18.100.10"}}, nil)
	s.api("POST", fmt.Sprintf("%sinterfaces/%d/?op=link_subnet", n, n3.ID), url.Values{"mode": {"AUTO"}, "subnet": {strconv.Itoa(other.ID)}}, nil)

	s.raid1LVM(id)

	s.uploadAs("custom/debian-e2e", "tgz", img, "")
	s.api("POST", "machines/", url.Values{"op": {"allocate"}, "system_id": {id}}, nil)
	ud := "#cloud-config\nssh_authorized_keys:\n  - " + strings.TrimSpace(string(pub)) +
		"\nwrite_files:\n  - path: /etc/anvil-e2e\n    content: deployed-by-anvil\n"
	t0 := time.Now()
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"debian-e2e"},
		"user_data": {base64.StdEncoding.EncodeToString([]byte(ud))}}, nil)
	s.waitStatus(id, "Deployed", install, b)
	t.Logf("op=deploy to DEPLOYED: %.0f s", time.Since(t0).Seconds())

	auto, bondIP := "", ""
	for _, i := range s.interfaces(id) {
		if i.ID == n3.ID && len(i.Links) == 1 {
			auto = i.Links[0].IP
		}
		if i.ID == bond.ID && len(i.Links) == 1 {
			bondIP = i.Links[0].IP
		}
	}
	if !strings.HasPrefix(auto, "198.51.100.") || !strings.HasPrefix(bondIP, "192.0.2.") {
		t.Fatalf("NIC 3's AUTO link has address %q, the bond's %q", auto, bondIP)
	}

	g := guest{s: s, key: sshKey, b: b, hostname: "row-r-u1"}
	ssh, login, run := g.ssh, g.login, g.run
	const static = "198.18.100.10"
	login(static)
	login(auto)

	bonding := run(static, "cat /proc/net/bonding/bond0")
	if !strings.Contains(bonding, "fault-tolerance (active-backup)") || strings.Count(bonding, "Slave Interface:") != 2 {
		t.Fatalf("/proc/net/bonding/bond0:\n%s", bonding)
	}
	if out := run(static, "ip -d link show bond0.100"); !strings.Contains(out, "vlan protocol 802.1Q id 100") {
		t.Fatalf("ip -d link show bond0.100:\n%s", out)
	}
	if out := run(static, "ip -br addr"); !strings.Contains(out, static+"/24") || !strings.Contains(out, auto+"/24") ||
		!strings.Contains(out, bondIP+"/24") {
		t.Fatalf("ip -br addr lacks %s, %s or %s:\n%s", static, auto, bondIP, out)
	}
	if out := run(static, "ip route"); !strings.Contains(out, "default via 198.51.100.1") {
		t.Fatalf("ip route: no default via the subnet's gateway:\n%s", out)
	}
	checkStorage(t, func(c string) string { return run(static, c) })
	run(static, "cloud-init status --wait >/dev/null || true")
	// Names resolve through Anvil's DNS on the rack, which the machine
	// is told of at the rack's address on each of its subnets (the
	// rack's own is 198.18.100.1 on VLAN 100, 198.51.100.1 on the other
	// fabric): the machine's own FQDN to its boot bond's address, the
	// device's, and the record.
	resolv := run(static, "cat /etc/resolv.conf")
	servers := regexp.MustCompile(`(?m)^nameserver (\S+)$`).FindAllStringSubmatch(resolv, -1)
	if len(servers) == 0 || !strings.Contains(resolv, "\nsearch maas") {
		t.Fatalf("/etc/resolv.conf names no nameserver or does not search maas:\n%s", resolv)
	}
	for _, ns := range servers {
		// The rack's addresses (the lab's BMC too lives in its namespace).
		if !slices.Contains([]string{regionIP, "198.18.100.1", "198.51.100.1", "192.0.2.30"}, ns[1]) {
			t.Fatalf("/etc/resolv.conf names %s, not an address of the rack:\n%s", ns[1], resolv)
		}
	}
	if out, err := ssh(static, "getent hosts row-r-u1.maas"); err != nil || !strings.Contains(out, bondIP) {
		t.Fatalf("getent hosts row-r-u1.maas: %v %q (resolv.conf:\n%s)", err, out, resolv)
	}
	for name, want := range map[string]string{"peer-node.maas": "192.0.2.77", "peer.maas": "198.51.100.77"} {
		if out, err := ssh(static, "getent hosts "+name); err != nil || !strings.Contains(out, want) {
			t.Fatalf("getent hosts %s: %v %q (resolv.conf:\n%s)", name, err, out, resolv)
		}
	}
	if out := run(static, "cat /etc/anvil-e2e"); !strings.Contains(out, "deployed-by-anvil") {
		t.Fatalf("user data's file: %q", out)
	}

	// Cut the active bond member: its tap goes down and its cable is out
	// (QEMU's link state, which the guest's miimon sees).
	active := regexp.MustCompile(`Currently Active Slave: (\S+)`).FindStringSubmatch(bonding)
	if active == nil {
		t.Fatalf("no active slave:\n%s", bonding)
	}
	k := s.nicIndex(static, run, active[1], macs)
	s.ns.Ip("link", "set", taps[k], "down")
	if _, err := b.Machine().QMP("set_link", map[string]any{"name": fmt.Sprintf("nic%d", k), "up": false}); err != nil {
		t.Fatalf("set_link nic%d off: %v", k, err)
	}
	time.Sleep(2 * time.Second)
	login(static)
	if now := run(static, "cat /proc/net/bonding/bond0"); strings.Contains(now, "Currently Active Slave: "+active[1]+"\n") {
		t.Fatalf("after cutting %s the bond still uses it:\n%s", active[1], now)
	}
	s.ns.Ip("link", "set", taps[k], "up")
	if _, err := b.Machine().QMP("set_link", map[string]any{"name": fmt.Sprintf("nic%d", k), "up": true}); err != nil {
		t.Fatal(err)
	}

	// Rebooted from inside, it boots its disk and lets us in again.
	_, _ = ssh(static, "sudo systemctl reboot")
	time.Sleep(10 * time.Second)
	login(static)
	checkStorage(t, func(c string) string { return run(static, c) })
	if st := s.machine(id).StatusName; st != "Deployed" {
		t.Fatalf("after the reboot the machine is %s", st)
	}

	// Released: the AUTO address goes back to the subnet; the STATIC one,
	// which an operator chose, stays on its link as MAAS keeps it.
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"release"}}, nil)
	s.waitStatus(id, "Ready", long, b)
	var used []struct {
		IP string `json:"ip"`
	}
	s.api("GET", fmt.Sprintf("subnets/%d/", other.ID), url.Values{"op": {"ip_addresses"}}, &used)
	for _, u := range used {
		if u.IP == auto {
			t.Fatalf("after the release %s is still in use: %+v", auto, used)
		}
	}
}

// checkStorage reads the deployed layout from inside the machine.
func checkStorage(t *testing.T, run func(string) string) {
	t.Helper()
	want := map[string]string{
		"findmnt -no FSTYPE,SOURCE /":          "ext4 /dev/mapper/vg0-root",
		"findmnt -no FSTYPE /boot":             "ext4",
		"findmnt -no FSTYPE /boot/efi":         "vfat",
		"sudo lvs --noheadings -o lv_name vg0": "root",
	}
	for c, w := range want {
		// findmnt aligns its columns: compare the fields.
		if out := run(c); !strings.Contains(strings.Join(strings.Fields(out), " "), w) {
			t.Fatalf("%s: %q, want %q", c, out, w)
		}
	}
	mdstat := run("cat /proc/mdstat")
	// Arrays are the "mdN : active raid1 ..." lines (the Personalities
	// line names raid1 too).
	if len(regexp.MustCompile(`(?m)^md\d+ : active raid1 `).FindAllString(mdstat, -1)) != 2 || strings.Count(mdstat, "[UU]") != 2 {
		t.Fatalf("/proc/mdstat: want two healthy RAID 1 arrays:\n%s", mdstat)
	}
	if out := run("findmnt -no SOURCE /boot"); !strings.HasPrefix(strings.TrimSpace(out), "/dev/md") {
		t.Fatalf("/boot is on %q, not an md array", out)
	}
	if out := run("cat /proc/swaps"); !strings.Contains(out, "/dev/dm-") {
		t.Fatalf("swap: %q", out)
	}
	if out := run("lsblk -no TYPE"); strings.Count(out, "raid1") < 4 || !strings.Contains(out, "lvm") {
		t.Fatalf("lsblk:\n%s", out)
	}
}

type apiSubnet struct {
	ID   int    `json:"id"`
	CIDR string `json:"cidr"`
	VLAN struct {
		ID       int `json:"id"`
		FabricID int `json:"fabric_id"`
	} `json:"vlan"`
}

type apiIface struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	MAC  string `json:"mac_address"`
	VLAN *struct {
		ID       int `json:"id"`
		FabricID int `json:"fabric_id"`
		VID      int `json:"vid"`
	} `json:"vlan"`
	Links []struct {
		ID   int    `json:"id"`
		Mode string `json:"mode"`
		IP   string `json:"ip_address"`
	} `json:"links"`
}

func (s *site) subnet(cidr string) apiSubnet {
	s.t.Helper()
	var ss []apiSubnet
	s.api("GET", "subnets/", nil, &ss)
	for _, sn := range ss {
		if sn.CIDR == cidr {
			return sn
		}
	}
	s.t.Fatalf("no subnet %s: %+v", cidr, ss)
	return apiSubnet{}
}

func (s *site) interfaces(id string) []apiIface {
	var out []apiIface
	s.api("GET", "nodes/"+id+"/interfaces/", nil, &out)
	return out
}

// nicIndex is the QEMU NIC (0-based) behind the deployed OS's interface
// name, by its permanent MAC (a bond member's current one is the bond's).
func (s *site) nicIndex(host string, run func(string, string) string, name string, macs []string) int {
	s.t.Helper()
	out := run(host, "cat /proc/net/bonding/bond0")
	block := out[strings.Index(out, "Slave Interface: "+name):]
	m := regexp.MustCompile(`Permanent HW addr: (\S+)`).FindStringSubmatch(block)
	if m == nil {
		s.t.Fatalf("no permanent address of %s:\n%s", name, out)
	}
	for i, mac := range macs {
		if strings.EqualFold(mac, m[1]) {
			return i
		}
	}
	s.t.Fatalf("%s's address %s is none of the machine's", name, m[1])
	return 0
}

// raid1LVM lays the machine's disks out through MAAS's storage ops, as
// the maas CLI would: the ESP on disk 1, RAID 1 of a partition on each
// disk for /boot, LVM on RAID 1 of the rest for / and swap.
func (s *site) raid1LVM(id string) {
	s.t.Helper()
	n := "nodes/" + id + "/"
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"set_storage_layout"}, "storage_layout": {"blank"}}, nil)
	var disks []struct {
		ID   int    `json:"id"`
		Type string `json:"type"`
	}
	s.api("GET", n+"blockdevices/", nil, &disks)
	var phys []int
	for _, d := range disks {
		if d.Type == "physical" {
			phys = append(phys, d.ID)
		}
	}
	if len(phys) != 2 {
		s.t.Fatalf("want 2 physical disks: %+v", disks)
	}
	type part struct {
		ID int `json:"id"`
	}
	newPart := func(dev int, size string) part {
		var p part
		f := url.Values{}
		if size != "" {
			f.Set("size", size)
		}
		s.api("POST", fmt.Sprintf("%sblockdevices/%d/partitions/", n, dev), f, &p)
		return p
	}
	esp := newPart(phys[0], "536870912")
	s.api("POST", fmt.Sprintf("%sblockdevices/%d/partition/%d?op=format", n, phys[0], esp.ID), url.Values{"fstype": {"fat32"}}, nil)
	s.api("POST", fmt.Sprintf("%sblockdevices/%d/partition/%d?op=mount", n, phys[0], esp.ID), url.Values{"mount_point": {"/boot/efi"}}, nil)
	newPart(phys[1], "536870912") // the same offsets on both disks
	b1, b2 := newPart(phys[0], "1073741824"), newPart(phys[1], "1073741824")
	r1, r2 := newPart(phys[0], ""), newPart(phys[1], "")
	type raid struct {
		Virtual struct {
			ID int `json:"id"`
		} `json:"virtual_device"`
	}
	var boot, root raid
	s.api("POST", n+"raids/", url.Values{"name": {"md0"}, "level": {"raid-1"}, "partitions": {strconv.Itoa(b1.ID), strconv.Itoa(b2.ID)}}, &boot)
	s.api("POST", n+"raids/", url.Values{"name": {"md1"}, "level": {"raid-1"}, "partitions": {strconv.Itoa(r1.ID), strconv.Itoa(r2.ID)}}, &root)
	fs := func(dev int, fstype, mp string) {
		s.api("POST", fmt.Sprintf("%sblockdevices/%d/?op=format", n, dev), url.Values{"fstype": {fstype}}, nil)
		f := url.Values{}
		if mp != "" {
			f.Set("mount_point", mp)
		}
		s.api("POST", fmt.Sprintf("%sblockdevices/%d/?op=mount", n, dev), f, nil)
	}
	fs(boot.Virtual.ID, "ext4", "/boot")
	var vg struct {
		ID int `json:"id"`
	}
	s.api("POST", n+"volume-groups/", url.Values{"name": {"vg0"}, "block_devices": {strconv.Itoa(root.Virtual.ID)}}, &vg)
	var swap, lv struct {
		ID int `json:"id"`
	}
	s.api("POST", fmt.Sprintf("%svolume-group/%d/?op=create_logical_volume", n, vg.ID), url.Values{"name": {"swap"}, "size": {"536870912"}}, &swap)
	s.api("POST", fmt.Sprintf("%svolume-group/%d/?op=create_logical_volume", n, vg.ID), url.Values{"name": {"root"}}, &lv)
	fs(swap.ID, "swap", "")
	fs(lv.ID, "ext4", "/")
}

// guest reaches a deployed machine over SSH from the site's namespace
// as cloud-init's default user, with the test's key.
type guest struct {
	s        *site
	key      string
	b        *ipmisim.BMC
	hostname string
}

func (g guest) ssh(host, command string) (string, error) {
	// LogLevel=ERROR: no "Permanently added" warning in the output read.
	out, err := exec.Command("ip", "netns", "exec", g.s.ns.Name, "ssh", "-i", g.key, "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=10",
		"debian@"+host, command).CombinedOutput()
	return string(out), err
}

// login waits (up to 4 minutes) until host lets the key in and names
// itself by the machine's hostname.
func (g guest) login(host string) {
	g.s.t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		out, err := g.ssh(host, "hostname")
		if err == nil && strings.TrimSpace(lastLine([]byte(out))) == g.hostname {
			return
		}
		if time.Now().After(deadline) {
			serial, _ := os.ReadFile(g.b.Serial())
			g.s.t.Fatalf("ssh debian@%s: %v\n%s\nserial console:\n%s", host, err, out, tail(serial, 6000))
		}
		time.Sleep(3 * time.Second)
	}
}

func (g guest) run(host, command string) string {
	g.s.t.Helper()
	out, err := g.ssh(host, command)
	if err != nil {
		g.s.t.Fatalf("ssh %s %q: %v\n%s", host, command, err, out)
	}
	return out
}

// realOSSite is what the real-OS tests start with: the checks that let
// them run (ANVIL_REAL_OS set, root, the tools), a site on taps, the
// cached Debian image, and an SSH key pair for cloud-init's user.
func realOSSite(t *testing.T, minutes string, taps []string) (s *site, img, sshKey string, pub []byte) {
	t.Helper()
	if testing.Short() {
		t.Skip("boots a QEMU machine")
	}
	if os.Getenv("ANVIL_REAL_OS") == "" {
		t.Skipf("about %s minutes under TCG: set ANVIL_REAL_OS=1 to run it", minutes)
	}
	for _, bin := range []string{"debootstrap", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (scripts/test.sh installs it)", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces, the Debian image build)")
	}
	// MAAS gives a deploy half an hour; under TCG the installed OS can
	// take ten minutes after the image is written before cloud-init
	// phones home, so the deploying window (twice this) must be long.
	s = newSite(t, taps, nil, "--status-timeout", "20m")
	img, built, err := debimage.BuildCached(context.Background(), os.TempDir(), debimage.Options{})
	if err != nil {
		t.Fatalf("Debian image: %v", err)
	}
	if built > 0 {
		t.Logf("built the Debian image in %s", built.Round(time.Second))
	}
	sshKey = filepath.Join(t.TempDir(), "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", sshKey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	if pub, err = os.ReadFile(sshKey + ".pub"); err != nil {
		t.Fatal(err)
	}
	return s, img, sshKey, pub
}
