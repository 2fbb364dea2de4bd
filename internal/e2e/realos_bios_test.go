package e2e

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
)

// TestDeployDebianBIOSLVM deploys the Debian image to a BIOS machine with
// MAAS's lvm layout (GPT with a BIOS boot partition, a volume group
// vgroot with lvroot for /), as set_storage_layout makes it, and a STATIC address on
// the boot NIC: the test logs in, finds / on the logical volume and the
// initramfs able to assemble it, reboots the machine from inside and logs
// in again. (The flat layout on BIOS is TestQuickstart's.)
func TestDeployDebianBIOSLVM(t *testing.T) {
	s, img, sshKey, pub := realOSSite(t, "25", []string{"tapL0"})
	qc := lab.QEMUConfig{MACs: []string{"52:54:00:0e:02:01"}, NetDevs: []string{"tapL0"}, Memory: 1024}
	b := s.machineWith("vmL", "192.0.2.31", "02:00:00:00:00:31", "6f2c1f1e-0000-4000-8000-0000000000a2", qc, 6<<10)
	form := s.ipmiParams(b)
	form.Set("hostname", "row-l-u1")
	var m apiMachine
	s.api("POST", "machines/", form, &m)
	id := m.SystemID
	s.waitStatus(id, "Ready", 15*time.Minute, b)

	const static = "192.0.2.41"
	prov := s.subnet("192.0.2.0/24")
	var eth0 apiIface
	for _, i := range s.interfaces(id) {
		if i.Type == "physical" {
			eth0 = i
		}
	}
	n := "nodes/" + id + "/interfaces/" + strconv.Itoa(eth0.ID) + "/"
	for _, l := range eth0.Links {
		s.api("POST", n, url.Values{"op": {"unlink_subnet"}, "id": {strconv.Itoa(l.ID)}}, nil)
	}
	s.api("POST", n, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"}, "subnet": {strconv.Itoa(prov.ID)}, "ip_address": {static}}, nil)
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"set_storage_layout"}, "storage_layout": {"lvm"}}, nil)

	s.uploadAs("custom/debian-e2e", "tgz", img, "")
	s.api("POST", "machines/", url.Values{"op": {"allocate"}, "system_id": {id}}, nil)
	ud := "#cloud-config\nssh_authorized_keys:\n  - " + strings.TrimSpace(string(pub)) + "\n"
	t0 := time.Now()
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"debian-e2e"},
		"user_data": {base64.StdEncoding.EncodeToString([]byte(ud))}}, nil)
	s.waitStatus(id, "Deployed", 45*time.Minute, b)
	t.Logf("op=deploy to DEPLOYED: %.0f s", time.Since(t0).Seconds())

	g := guest{s: s, key: sshKey, b: b, hostname: "row-l-u1"}
	check := func() {
		t.Helper()
		// findmnt aligns its columns: compare the fields.
		if out := g.run(static, "findmnt -no FSTYPE,SOURCE /"); !strings.Contains(strings.Join(strings.Fields(out), " "), "ext4 /dev/mapper/vgroot-lvroot") {
			t.Fatalf("findmnt /: %q", out)
		}
		if out := g.run(static, "sudo lvs --noheadings -o lv_name vgroot"); !strings.Contains(out, "lvroot") {
			t.Fatalf("lvs: %q", out)
		}
		// GPT with a BIOS boot partition for GRUB's core image, as MAAS lays
		// out a BIOS disk.
		if out := g.run(static, "sudo sfdisk -d /dev/vda"); !strings.Contains(out, "label: gpt") ||
			!strings.Contains(strings.ToUpper(out), "21686148-6449-6E6F-744E-656564454649") {
			t.Fatalf("the BIOS disk has no GPT with a BIOS boot partition:\n%s", out)
		}
	}
	g.login(static)
	check()
	_, _ = g.ssh(static, "sudo systemctl reboot")
	time.Sleep(10 * time.Second)
	g.login(static)
	check()
	if st := s.machine(id).StatusName; st != "Deployed" {
		t.Fatalf("after the reboot the machine is %s", st)
	}
}
