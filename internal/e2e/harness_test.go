package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/ipmisim"
	"github.com/anvilmetal/anvil/internal/testutil/ephemeral"
	"github.com/anvilmetal/anvil/internal/testutil/netns"
	"github.com/anvilmetal/anvil/internal/testutil/syncbuf"
)

// site is one Anvil (region and rack in one process) serving the
// namespace's bridge at 192.0.2.1, and the machines the test racks there.
type site struct {
	t    *testing.T
	ns   *netns.NS
	cl   *client.Client
	data string
	log  *syncbuf.Buffer
	bmcs []*ipmisim.BMC
	// bmcIPs are the BMC addresses on the bridge.
	bmcIPs []string
	key    string
	// disks are the machines' disk image files, by machine name.
	disks map[string]string
	// bmcLAN is where BMC addresses go, as "/bits dev" ("/24 br0", the
	// provisioning bridge, when empty).
	bmcLAN string
}

const (
	regionIP = "192.0.2.1"
	bmcUser  = "admin"
	bmcPass  = "Bmc-secret-1"
)

// siteSeq numbers the sites of one test run, so namespace names differ
// (tests run side by side).
var siteSeq atomic.Int64

var buildOnce struct {
	sync.Once
	bin string
	err error
}

// anvilBinary builds cmd/anvil once per test run.
func anvilBinary(t *testing.T) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "anvil-e2e-bin-")
		if err != nil {
			buildOnce.err = err
			return
		}
		buildOnce.bin = filepath.Join(dir, "anvil")
		out, err := exec.Command("go", "build", "-o", buildOnce.bin, "github.com/anvilmetal/anvil/cmd/anvil").CombinedOutput()
		if err != nil {
			buildOnce.err = fmt.Errorf("build anvil: %v\n%s", err, out)
		}
	})
	if buildOnce.err != nil {
		t.Fatal(buildOnce.err)
	}
	return buildOnce.bin
}

// newSite starts Anvil in a fresh namespace with a bridge and the taps.
// With a partition, the rack runs as its own process and follows the
// region through it, so the test can cut the rack off the region.
func newSite(t *testing.T, taps []string, partition *partition, serveExtra ...string) *site {
	t.Helper()
	if testing.Short() {
		t.Skip("boots QEMU machines")
	}
	for _, bin := range []string{"qemu-system-x86_64", "ipmi_sim", "ipmitool"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (scripts/test.sh installs it)", bin)
		}
	}
	kernel, initrd := ephemeral.Build(t)
	bin := anvilBinary(t)
	ns := netns.New(t, fmt.Sprintf("anve2e%d-%d", os.Getpid()%100000, siteSeq.Add(1)))
	ns.Bridge("br0", regionIP+"/24", taps...)
	ns.Ip("link", "set", "br0", "type", "bridge", "forward_delay", "0")
	s := &site{t: t, ns: ns, data: t.TempDir(), log: &syncbuf.Buffer{}}
	boot := filepath.Join(s.data, "boot", "ephemeral")
	if err := os.MkdirAll(boot, 0o755); err != nil {
		t.Fatal(err)
	}
	link(t, kernel, filepath.Join(boot, "vmlinuz"))
	link(t, initrd, filepath.Join(boot, "initrd.img"))

	key := apikey(t, bin, s.data, "admin")
	s.key = key
	rackFlags := []string{"--tftp-listen", regionIP + ":69", "--boot-http-listen", regionIP + ":5248",
		"--boot-http-url", "http://" + regionIP + ":5248", "--dhcp-interface", "br0"}
	serveFlags := []string{"serve", "--data", s.data, "--listen", regionIP + ":5240",
		"--status-timeout", "5m", "--power-poll-interval", "30s", "--log-level", "debug"}
	serveFlags = append(serveFlags, serveExtra...)
	if partition == nil {
		s.run(bin, append(serveFlags, rackFlags...)...)
	} else {
		rackKey := apikey(t, bin, s.data, "rack")
		s.run(bin, append(serveFlags, "--tftp-listen=", "--boot-http-listen=")...)
		partition.start(t, ns, regionIP+":5250", regionIP+":5240")
		rackData := t.TempDir()
		rboot := filepath.Join(rackData, "boot", "ephemeral")
		if err := os.MkdirAll(rboot, 0o755); err != nil {
			t.Fatal(err)
		}
		link(t, kernel, filepath.Join(rboot, "vmlinuz"))
		link(t, initrd, filepath.Join(rboot, "initrd.img"))
		s.run(bin, append([]string{"rack", "--region", "http://" + regionIP + ":5250/MAAS/", "--key", rackKey,
			"--data", rackData, "--metadata-url", "http://" + regionIP + ":5240/MAAS/metadata/"}, rackFlags...)...)
	}

	var err error
	s.cl, err = client.New("http://"+regionIP+":5240/MAAS/", key)
	if err != nil {
		t.Fatal(err)
	}
	s.cl.HTTP.Transport = dialIn(ns)
	s.waitFor("the region to answer", 30*time.Second, func() bool {
		_, err := s.cl.Do(context.Background(), "GET", "version/", nil, nil)
		return err == nil
	})
	s.api("POST", "subnets/", url.Values{"cidr": {"192.0.2.0/24"}, "dhcp_on": {"true"}}, nil)
	s.api("POST", "ipranges/", url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.200"}}, nil)
	return s
}

// dialIn is a transport for an API inside the namespace: it dials from
// there.
func dialIn(ns *netns.NS) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := ns.Do(func() (err error) {
			c, err = (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}}
}

func apikey(t *testing.T, bin, data, user string) string {
	out, err := exec.Command(bin, "apikey", "--username", user, "--data", data).Output()
	if err != nil {
		t.Fatalf("apikey %s: %v", user, err)
	}
	return strings.TrimSpace(string(out))
}

// run starts an anvil process inside the namespace for the test's life;
// its output goes to the site's log, shown when the test fails.
func (s *site) run(bin string, args ...string) {
	startProc(s.t, procSpec{ns: s.ns.Name, label: "anvil " + args[0], out: s.log}, bin, args...)
}

func link(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Link(from, to); err == nil {
		return
	}
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// api calls the MAAS API (form for POST/PUT, query otherwise) and decodes
// the answer into out when given.
func (s *site) api(method, path string, form url.Values, out any) {
	s.t.Helper()
	var q url.Values
	if method == "GET" {
		q, form = form, nil
	}
	b, err := s.cl.Do(context.Background(), method, path, q, form)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// apiMachine is what the tests read of a machine.
type apiMachine struct {
	SystemID   string  `json:"system_id"`
	Hostname   string  `json:"hostname"`
	StatusName string  `json:"status_name"`
	StatusMsg  string  `json:"status_message"`
	PowerState string  `json:"power_state"`
	PowerType  string  `json:"power_type"`
	CPUCount   int     `json:"cpu_count"`
	Memory     int64   `json:"memory"`
	Storage    float64 `json:"storage"`
	Zone       struct {
		Name string `json:"name"`
	} `json:"zone"`
	Interfaces []struct {
		MAC string `json:"mac_address"`
	} `json:"interface_set"`
	HardwareInfo map[string]string `json:"hardware_info"`
	TagNames     []string          `json:"tag_names"`
}

func (m apiMachine) macs() []string {
	var out []string
	for _, i := range m.Interfaces {
		out = append(out, i.MAC)
	}
	return out
}

func (s *site) machines() []apiMachine {
	var ms []apiMachine
	s.api("GET", "machines/", nil, &ms)
	return ms
}

func (s *site) machine(id string) apiMachine {
	var m apiMachine
	s.api("GET", "machines/"+id+"/", nil, &m)
	return m
}

// events returns the machine's timeline, oldest first, one line each.
func (s *site) events(id string) string {
	page, err := s.cl.QueryEvents(context.Background(), url.Values{"id": {id}, "limit": {"1000"}})
	if err != nil {
		s.t.Fatal(err)
	}
	var lines []string
	for i := len(page.Events) - 1; i >= 0; i-- {
		e := page.Events[i]
		lines = append(lines, e.Type+": "+e.Description)
	}
	return strings.Join(lines, "\n")
}

func (s *site) waitFor(what string, d time.Duration, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitSerial waits until cond holds of the machine's serial console, and
// shows the console's end when it does not.
func (s *site) waitSerial(b *ipmisim.BMC, what string, d time.Duration, cond func(serial string) bool) {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		out, _ := os.ReadFile(b.Serial())
		if cond(string(out)) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out after %s waiting for %s; serial console:\n%s", d, what, tail(out, 6000))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitStatus waits for the machine's status, showing its timeline and
// the serial console of bmc when it does not come.
func (s *site) waitStatus(id, status string, d time.Duration, bmc *ipmisim.BMC) apiMachine {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		m := s.machine(id)
		if m.StatusName == status {
			return m
		}
		if time.Now().After(deadline) {
			serial := []byte{}
			if bmc != nil {
				serial, _ = os.ReadFile(bmc.Serial())
			}
			s.t.Fatalf("machine %s is %s (%s), not %s, after %s\ntimeline:\n%s\nserial console:\n%s",
				id, m.StatusName, m.StatusMsg, status, d, s.events(id), tail(serial, 4000))
		}
		time.Sleep(time.Second)
	}
}

// machineAt racks a QEMU machine behind an ipmi_sim BMC at bmcIP. Its
// NICs are plugged into taps in the order of macs (PCI order: the first
// is the one the firmware network-boots from).
func (s *site) machineAt(name, bmcIP, bmcMAC, uuid string, macs, taps []string, diskMiB int) *ipmisim.BMC {
	s.t.Helper()
	qc := lab.QEMUConfig{MACs: macs, NetDevs: taps, Memory: 512}
	if diskMiB > 0 {
		return s.machineWith(name, bmcIP, bmcMAC, uuid, qc, diskMiB)
	}
	return s.machineWith(name, bmcIP, bmcMAC, uuid, qc)
}

// machineWith is machineAt with the QEMU machine as qc says (its ID and
// UUID are filled in), and a sparse disk of each size in diskMiB: the
// first is the boot disk, s.disks[name].
func (s *site) machineWith(name, bmcIP, bmcMAC, uuid string, qc lab.QEMUConfig, diskMiB ...int) *ipmisim.BMC {
	s.t.Helper()
	dir := s.t.TempDir()
	qc.ID, qc.UUID = name, uuid
	for k, size := range diskMiB {
		path := filepath.Join(dir, fmt.Sprintf("disk%d.img", k))
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			s.t.Fatal(err)
		}
		if err := os.Truncate(path, int64(size)<<20); err != nil {
			s.t.Fatal(err)
		}
		if k == 0 {
			qc.Disk = path
			if s.disks == nil {
				s.disks = map[string]string{}
			}
			s.disks[name] = path
		} else {
			qc.MoreDisks = append(qc.MoreDisks, path)
		}
	}
	// The BMC's own LAN port: an address on the provisioning network
	// (added once: a BMC restarted at the same address reuses it).
	if !slices.Contains(s.bmcIPs, bmcIP) {
		bits, dev, _ := strings.Cut(cmp.Or(s.bmcLAN, "/24 br0"), " ")
		s.ns.Ip("addr", "add", bmcIP+bits, "dev", dev)
		s.bmcIPs = append(s.bmcIPs, bmcIP)
	}
	b, err := ipmisim.Start(ipmisim.Config{
		Dir: dir, Netns: s.ns.Name, Addr: bmcIP, MAC: bmcMAC, User: bmcUser, Password: bmcPass, QEMU: qc,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { b.Close() })
	s.bmcs = append(s.bmcs, b)
	return b
}

// ipmitool runs the real ipmitool against a BMC, inside the namespace.
func (s *site) ipmitool(bmcIP string, args ...string) string {
	s.t.Helper()
	return s.ipmitoolAs(bmcIP, bmcUser, bmcPass, args...)
}

// ipmitoolAs is ipmitool with other credentials.
func (s *site) ipmitoolAs(bmcIP, user, pass string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", s.ns.Name, "ipmitool", "-I", "lanplus", "-H", bmcIP,
		"-U", user, "-P", pass}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("ipmitool %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *site) ipmiParams(b *ipmisim.BMC) url.Values {
	f := url.Values{"power_type": {"ipmi"}}
	for k, v := range b.Params() {
		f.Set("power_parameters_"+k, v)
	}
	return f
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
