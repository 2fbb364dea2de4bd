package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/secret"
	"github.com/anvilmetal/anvil/internal/testutil/netns"
	"github.com/anvilmetal/anvil/internal/testutil/syncbuf"
)

// The multi-site world, in namespaces of its own:
//
//	core     the regions, 198.18.0.1 and .2 on bridge mgmt (198.18.0.0/24);
//	         PostgreSQL reached through a relay to the host's
//	site A   bridge prov (192.0.2.0/25, its router at .1) where machines
//	         boot, bridge bmc (198.51.100.0/25) where their BMCs are; the
//	         site routes its machines to the regions (198.18.0.21)
//	site B   likewise: prov 192.0.2.128/25, bmc 198.51.100.128/25 (.22)
//	racks    a namespace each, with a leg on mgmt, on its site's prov
//	         and on its site's bmc: only a site's racks reach its BMCs.
const (
	r1IP, r2IP   = "198.18.0.1", "198.18.0.2"
	mgmtBits     = "/24"
	siteBits     = "/25"
	bmcNetA      = "198.51.100.0/25"
	bmcNetB      = "198.51.100.128/25"
	provNetA     = "192.0.2.0/25"
	provNetB     = "192.0.2.128/25"
	powerLease   = 3 * time.Second
	rackLiveness = 4 * time.Second
)

type multisite struct {
	t       *testing.T
	bin     string
	db      string
	pool    *pgxpool.Pool
	core    *netns.NS
	siteA   *netns.NS
	siteB   *netns.NS
	key     string
	regions []*regionProc
	kernel  string
	initrd  string
	pid     int
}

// regionProc is one anvil serve; api drives it with the harness's site
// helpers (api, machine, waitStatus, events).
type regionProc struct {
	name string
	ip   string
	args []string
	out  *syncbuf.Buffer
	p    *proc
	api  *site
	up   atomic.Bool
}

// rackProc is one anvil rack.
type rackProc struct {
	name   string // the hostname it enrols under
	ns     *netns.NS
	bmcIP  string // its address on its site's BMC network
	provIP string // and on its provisioning network
	args   []string
	out    *syncbuf.Buffer
	p      *proc
	sysID  string
	region *regionProc
}

func (m *multisite) nsName(s string) string { return fmt.Sprintf("ms%d%s", m.pid, s) }

// newMultisite builds the namespaces, links and routes, and the relay to
// PostgreSQL.
func newMultisite(t *testing.T, bin, db, kernel, initrd string, tapsA ...string) *multisite {
	m := &multisite{t: t, bin: bin, db: db, kernel: kernel, initrd: initrd, pid: os.Getpid() % 100000}
	m.core = netns.New(t, m.nsName("core"))
	m.core.Bridge("mgmt", r1IP+mgmtBits)
	m.core.Ip("addr", "add", r2IP+mgmtBits, "dev", "mgmt")
	m.siteA = m.siteNet("sa", "192.0.2.1", "198.18.0.21", provNetA, tapsA...)
	m.siteB = m.siteNet("sb", "192.0.2.129", "198.18.0.22", provNetB)

	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	pg := &partition{host: true}
	pg.start(t, m.core, u.Host, u.Host)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if m.pool, err = pgxpool.New(ctx, db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.pool.Close)
	return m
}

// siteNet is a site's namespace: its provisioning bridge (with the
// site's router at router, and the QEMU taps), its BMC bridge, and its
// uplink to mgmt at up, through which the regions reach its machines.
func (m *multisite) siteNet(name, router, up, prov string, taps ...string) *netns.NS {
	ns := netns.New(m.t, m.nsName(name))
	ns.Bridge("prov", router+siteBits, taps...)
	ns.Ip("link", "set", "prov", "type", "bridge", "forward_delay", "0")
	ns.Ip("link", "add", "bmc", "type", "bridge")
	ns.Ip("link", "set", "bmc", "up")
	m.core.Plug("mgmt", "site"+name, ns, "uplink", "", up+mgmtBits)
	if out, err := exec.Command("ip", "netns", "exec", ns.Name, "sysctl", "-qw", "net.ipv4.ip_forward=1").CombinedOutput(); err != nil {
		m.t.Fatalf("sysctl in %s: %v %s", ns.Name, err, out)
	}
	m.core.Ip("route", "add", prov, "via", up)
	return ns
}

// rackNet is a rack's namespace with its three legs.
func (m *multisite) rackNet(name string, site *netns.NS, mgmtIP, provIP, bmcIP string) *netns.NS {
	ns := netns.New(m.t, m.nsName(name))
	port := "rk" + name // ip takes some short words (b, up) for keywords
	m.core.Plug("mgmt", port, ns, "mgmt", "", mgmtIP+mgmtBits)
	site.Plug("prov", port+"p", ns, "prov", "", provIP+siteBits)
	site.Plug("bmc", port+"b", ns, "bmc", "", bmcIP+siteBits)
	return ns
}

// anvil runs an anvil command on the host against the shared database
// (region 1's data directory holds the secret key) and returns its
// standard output's first line.
func (m *multisite) anvil(data string, args ...string) string {
	m.t.Helper()
	cmd := exec.Command(m.bin, append(args, "--data", data, "--db", m.db)...)
	out, err := cmd.Output()
	if err != nil {
		m.t.Fatalf("anvil %v: %v", args, err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// startRegions starts two regions on the database, with one secret key.
func (m *multisite) startRegions() {
	t := m.t
	d1, d2 := t.TempDir(), t.TempDir()
	m.key = m.anvil(d1, "apikey", "--username", "admin")
	// Every region seals and opens power parameters and token secrets
	// with the same key.
	k, err := os.ReadFile(filepath.Join(d1, secret.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d2, secret.KeyFile), k, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, r := range []struct{ ip, data string }{{r1IP, d1}, {r2IP, d2}} {
		rp := &regionProc{name: fmt.Sprintf("region %d", i+1), ip: r.ip, out: &syncbuf.Buffer{}}
		rp.args = []string{"serve", "--data", r.data, "--db", m.db, "--listen", r.ip + ":5240", "--remote-power",
			"--tftp-listen=", "--boot-http-listen=", "--dns-listen=", "--status-timeout", "5m", "--power-poll-interval", "1h",
			"--power-lease", powerLease.String(), "--rack-live", rackLiveness.String(), "--log-level", "debug"}
		cl, err := client.New("http://"+r.ip+":5240/MAAS/", m.key)
		if err != nil {
			t.Fatal(err)
		}
		cl.HTTP.Transport = dialIn(m.core)
		rp.api = &site{t: t, ns: m.core, cl: cl, log: rp.out}
		m.regions = append(m.regions, rp)
		m.startRegion(rp)
	}
}

func (m *multisite) startRegion(r *regionProc) {
	r.p = startProc(m.t, procSpec{ns: m.core.Name, label: r.name, out: r.out}, m.bin, r.args...)
	r.api.waitFor(r.name+" to answer", 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := r.api.cl.Do(ctx, "GET", "version/", nil, nil)
		return err == nil
	})
	r.up.Store(true)
}

// kill ends the region with SIGKILL.
func (r *regionProc) kill() {
	r.up.Store(false)
	r.p.kill()
}

// startRack enrols a rack with a one-time secret and starts it, with the
// ephemeral environment to boot machines with.
func (m *multisite) startRack(name string, ns *netns.NS, region *regionProc, provIP, bmcIP, bmcNet string) *rackProc {
	t := m.t
	data := t.TempDir()
	boot := filepath.Join(data, "boot", "ephemeral")
	if err := os.MkdirAll(boot, 0o755); err != nil {
		t.Fatal(err)
	}
	link(t, m.kernel, filepath.Join(boot, "vmlinuz"))
	link(t, m.initrd, filepath.Join(boot, "initrd.img"))
	r := &rackProc{name: name, ns: ns, bmcIP: bmcIP, provIP: provIP, out: &syncbuf.Buffer{}, region: region}
	r.args = []string{"rack", "--region", "http://" + region.ip + ":5240/MAAS/", "--hostname", name, "--data", data,
		"--bmc-network", bmcNet, "--dhcp-interface", "prov", "--tftp-listen", provIP + ":69",
		"--boot-http-listen", provIP + ":5248", "--boot-http-url", "http://" + provIP + ":5248", "--dns-listen", provIP + ":53",
		"--metadata-url", "http://" + region.ip + ":5240/MAAS/metadata/"}
	// The secret goes in the environment: command lines are public. It
	// grants the rack the BMC network it declares.
	secret := m.anvil(m.regionData(0), "rack", "secret", "--bmc-network", bmcNet)
	m.runRack(r, "ANVIL_RACK_ENROL_SECRET="+secret)
	return r
}

// runRack starts the rack's process; env is added to its environment.
func (m *multisite) runRack(r *rackProc, env ...string) {
	r.p = startProc(m.t, procSpec{ns: r.ns.Name, label: "rack " + r.name, out: r.out, env: env}, m.bin, r.args...)
}

func (m *multisite) regionData(i int) string {
	args := m.regions[i].args
	for k, a := range args {
		if a == "--data" {
			return args[k+1]
		}
	}
	m.t.Fatal("region without --data")
	return ""
}

// live is a region that answers, for a client that knows which do.
func (m *multisite) live() *regionProc {
	for _, r := range m.regions {
		if r.up.Load() {
			return r
		}
	}
	m.t.Fatal("no region is up")
	return nil
}

// powerRow is a power request as the shared database holds it.
type powerRow struct {
	ID, SystemID, Action, State, Owner, Error string
	Attempts                                  int
	// Started is when it was last claimed.
	Created, Started, Finished time.Time
}

// requests lists the actions (not queries) asked of the machines.
func (m *multisite) requests(ids ...string) []powerRow {
	m.t.Helper()
	rs, err := m.queryRequests(ids...)
	if err != nil {
		m.t.Fatal(err)
	}
	return rs
}

// requestsByID lists the requests by their ids.
func (m *multisite) requestsByID(ids ...string) []powerRow {
	m.t.Helper()
	rs, err := m.selectRequests("id", ids)
	if err != nil {
		m.t.Fatal(err)
	}
	return rs
}

// queryRequests is requests for any goroutine: it returns the error.
func (m *multisite) queryRequests(ids ...string) ([]powerRow, error) {
	return m.selectRequests("system_id", ids)
}

// selectRequests lists the actions (not queries) whose column is one of
// vals.
func (m *multisite) selectRequests(column string, vals []string) ([]powerRow, error) {
	rows, err := m.pool.Query(context.Background(), `SELECT id, system_id, action, state, lease_owner, error, attempts, created,
		COALESCE(started, 'epoch'), COALESCE(finished, 'epoch') FROM power_requests WHERE `+column+` = ANY($1) AND action <> 'query' ORDER BY seq`, vals)
	if err != nil {
		return nil, fmt.Errorf("power requests: %w", err)
	}
	defer rows.Close()
	var out []powerRow
	for rows.Next() {
		var r powerRow
		if err := rows.Scan(&r.ID, &r.SystemID, &r.Action, &r.State, &r.Owner, &r.Error, &r.Attempts, &r.Created, &r.Started, &r.Finished); err != nil {
			return nil, fmt.Errorf("power requests: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("power requests: %w", err)
	}
	return out, nil
}

// open says whether any of the machines' actions is queued or running.
func (m *multisite) open(ids ...string) bool { return anyOpen(m.requests(ids...)) }

// openRequests says whether any of the requests is queued or running.
func (m *multisite) openRequests(ids ...string) bool { return anyOpen(m.requestsByID(ids...)) }

func anyOpen(rs []powerRow) bool {
	for _, r := range rs {
		if r.State == "queued" || r.State == "running" {
			return true
		}
	}
	return false
}

// rackSeen is when the rack's latest power worker (its claim id is its
// system id and a suffix new at every start) last asked for work, and
// that id.
func (m *multisite) rackSeen(r *rackProc) (id string, seen time.Time) {
	m.t.Helper()
	err := m.pool.QueryRow(context.Background(), `SELECT rack_id, seen FROM rack_power WHERE rack_id LIKE $1 ORDER BY seen DESC LIMIT 1`,
		r.sysID+".%").Scan(&id, &seen)
	if err != nil && !strings.Contains(err.Error(), "no rows") {
		m.t.Fatal(err)
	}
	return id, seen
}

// owner is the rack whose power worker holds (or held) a lease.
func owner(racks []*rackProc, leaseOwner string) *rackProc {
	for _, r := range racks {
		if strings.HasPrefix(leaseOwner, "rack:"+r.sysID+".") {
			return r
		}
	}
	return nil
}
