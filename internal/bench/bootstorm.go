package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/lab/simboot"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// BootstormConfig says what `anvil bench bootstorm` does.
type BootstormConfig struct {
	Binary   string // the anvil binary, run as `anvil serve` in the namespace
	Machines int
	DBURL    string // "" for SQLite
	// KernelBytes and InitrdBytes size the ephemeral files the rack serves.
	KernelBytes, InitrdBytes int64
	// DropDHCP is the share (0..1) of machines whose first DHCP packet is
	// lost; Silent the share whose agent stops reporting.
	DropDHCP, Silent float64
	// EnlistCommission runs the server with --enlist-commission, so the
	// storm goes on into commissioning.
	EnlistCommission bool
	Timeout          time.Duration // for the whole storm (default 5 minutes)
	Out              io.Writer     // progress
}

// BootstormResult is what a storm measured.
type BootstormResult struct {
	Config BootstormConfig
	// Target is the status the storm waits for: New, or Ready when
	// enlisting goes on to commissioning (silent machines excepted).
	Target string
	// AllNew is from the first DISCOVER until the API lists every
	// machine in Target (0: never), seen by polling every 0.5 s.
	AllNew     time.Duration
	BootsDone  time.Duration  // until the last simulated boot returned
	Enlisted   int            // distinct machines listed with a storm MAC
	New        int            // of them in status Target
	Statuses   map[string]int // every storm machine's status
	Duplicates int            // MACs listed on more than one machine, or machines with the same MAC
	Missing    []string       // storm MACs the API does not list
	Errors     map[string]int
	FirstErrs  []string // a few error texts
	Retries    int      // DHCP retransmissions
	Stages     map[string]Latency
	RSSPeakKiB int64
	// UDP datagrams the kernel dropped for a full socket buffer during
	// the storm: at the server (DHCP requests) and at the simulator.
	ServerUDPDrops, ClientUDPDrops int64
	Results                        []simboot.Result
}

// The boot storm's addresses: the rack and region on 192.0.2.1, the
// provisioning subnet 198.18.0.0/16 (server 198.18.0.1, the simulated
// machines' HTTP source 198.18.0.2, leases from 198.18.1.0 on).
const (
	bsRack      = "192.0.2.1"
	bsSubnet    = "198.18.0.0/16"
	bsRackIP    = "198.18.0.1"
	bsClientIP  = "198.18.0.2"
	bsPoolStart = "198.18.1.1"
	bsPoolEnd   = "198.18.255.254"
)

// bsTopo is the storm's network: the server namespace has a bridge with
// the rack's addresses and one veth port; its peer, in the client
// namespace, carries every simulated machine.
type bsTopo struct {
	srvNS, cliNS, bridge, cliIf string
}

func newBSTopo() (*bsTopo, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the bootstorm bench needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, errors.New("the bootstorm bench needs ip (iproute2)")
	}
	pid := os.Getpid()
	t := &bsTopo{srvNS: fmt.Sprintf("anvbss%d", pid), cliNS: fmt.Sprintf("anvbsc%d", pid), bridge: "br0", cliIf: "eth0"}
	port := fmt.Sprintf("bsp%d", pid)
	steps := [][]string{
		{"netns", "add", t.srvNS},
		{"netns", "add", t.cliNS},
		{"-n", t.srvNS, "link", "add", t.bridge, "type", "bridge"},
		{"-n", t.srvNS, "link", "add", port, "type", "veth", "peer", "name", t.cliIf, "netns", t.cliNS},
		{"-n", t.srvNS, "link", "set", port, "master", t.bridge},
		{"-n", t.srvNS, "addr", "add", bsRack + "/24", "dev", t.bridge},
		{"-n", t.srvNS, "addr", "add", bsRackIP + "/16", "dev", t.bridge},
		{"-n", t.cliNS, "addr", "add", bsClientIP + "/16", "dev", t.cliIf},
		{"-n", t.srvNS, "link", "set", "lo", "up"},
		{"-n", t.cliNS, "link", "set", "lo", "up"},
		{"-n", t.srvNS, "link", "set", t.bridge, "up"},
		{"-n", t.srvNS, "link", "set", port, "up"},
		{"-n", t.cliNS, "link", "set", t.cliIf, "up"},
		{"-n", t.cliNS, "route", "add", bsRack + "/32", "dev", t.cliIf, "src", bsClientIP},
	}
	for _, s := range steps {
		if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
			t.close()
			return nil, fmt.Errorf("ip %s: %v %s", strings.Join(s, " "), err, out)
		}
	}
	return t, nil
}

func (t *bsTopo) close() {
	for _, ns := range []string{t.srvNS, t.cliNS} {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
}

// RunBootstorm starts `anvil serve` in a namespace with DHCP on, then
// boots cfg.Machines simulated machines at once against it and waits
// until the API lists them all NEW. It stops the server and deletes the
// namespaces before returning.
func RunBootstorm(ctx context.Context, cfg BootstormConfig) (BootstormResult, error) {
	res := BootstormResult{Config: cfg, Errors: map[string]int{}, Stages: map[string]Latency{}}
	if cfg.Machines < 1 || cfg.Machines > 60000 {
		return res, errors.New("bootstorm: --machines must be 1..60000")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	logf := func(format string, args ...any) {
		if cfg.Out != nil {
			fmt.Fprintf(cfg.Out, format+"\n", args...)
		}
	}
	tp, err := newBSTopo()
	if err != nil {
		return res, err
	}
	defer tp.close()

	dir, err := os.MkdirTemp("", "anvil-bootstorm-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	eph := filepath.Join(dir, "boot", "ephemeral")
	if err := os.MkdirAll(eph, 0o755); err != nil {
		return res, err
	}
	for name, n := range map[string]int64{"vmlinuz": cfg.KernelBytes, "initrd.img": cfg.InitrdBytes} {
		if err := writeRandom(filepath.Join(eph, name), n); err != nil {
			return res, err
		}
	}

	dbURL := cfg.DBURL
	if dbURL != "" {
		u, drop, err := pgtest.Create(ctx, dbURL)
		if err != nil {
			return res, err
		}
		defer func() { _ = drop() }()
		dbURL = u
	}
	args := []string{cfg.Binary, "serve", "--data", dir, "--listen", bsRack + ":5240", "--log-level", "warn",
		"--tftp-listen", "", "--boot-http-listen", bsRack + ":5248", "--boot-http-url", "http://" + bsRack + ":5248",
		"--dhcp-interface", tp.bridge, "--no-ipv6-ra-reply"}
	if dbURL != "" {
		args = append(args, "--db", dbURL)
	}
	if cfg.EnlistCommission {
		args = append(args, "--enlist-commission")
	}
	srv, err := startChild("anvil serve", tp.srvNS, nil, args...)
	if err != nil {
		return res, err
	}
	defer srv.stop()

	nw, err := simboot.OpenNet(tp.cliNS, tp.cliIf)
	if err != nil {
		return res, err
	}
	defer nw.Close()
	base := "http://" + bsRack + ":5240/MAAS/"
	if err := waitUpWith(ctx, nw.HTTP, base+"../healthz", srv); err != nil {
		return res, err
	}
	keyArgs := []string{"apikey", "--username", "bench", "--data", dir}
	if dbURL != "" {
		keyArgs = append(keyArgs, "--db", dbURL)
	}
	out, err := exec.CommandContext(ctx, cfg.Binary, keyArgs...).Output()
	if err != nil {
		return res, fmt.Errorf("apikey: %w", err)
	}
	api := &caller{base: base + "api/2.0/", auth: authHeader(strings.TrimSpace(string(out))), http: nw.HTTP}
	if err := api.post(ctx, "subnets/", map[string][]string{"cidr": {bsSubnet}, "dhcp_on": {"true"}}); err != nil {
		return res, err
	}
	if err := api.post(ctx, "ipranges/", map[string][]string{"type": {"dynamic"}, "start_ip": {bsPoolStart}, "end_ip": {bsPoolEnd}}); err != nil {
		return res, err
	}
	// The rack takes the subnet from its stream from the region: a probe
	// machine (not counted) waits for DHCP to answer, without enlisting.
	if err := waitDHCP(ctx, nw); err != nil {
		return res, fmt.Errorf("%w; server said: %s", err, srv.output())
	}

	ms := make([]*simboot.Machine, cfg.Machines)
	rng := rand.New(rand.NewPCG(7, uint64(cfg.Machines)))
	for i := range ms {
		m := &simboot.Machine{MACs: []string{simboot.NewMAC(2 * i), simboot.NewMAC(2*i + 1)}, UUID: simboot.NewUUID()}
		if rng.Float64() < cfg.DropDHCP {
			m.DropDHCP = 1
		}
		if rng.Float64() < cfg.Silent {
			m.Silent = true
		}
		ms[i] = m
	}
	logf("booting %d machines at once...", cfg.Machines)
	sctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	bc := simboot.Config{Net: nw, RackHTTP: "http://" + bsRack + ":5248"}
	res.Results = make([]simboot.Result, len(ms))

	// RSS is the region's peak (VmHWM), read at the end.
	srvDrops0, cliDrops0 := udpRcvbufErrors(tp.srvNS), udpRcvbufErrors(tp.cliNS)
	start := time.Now()
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Results[i] = m.Boot(sctx, bc)
		}()
	}
	bootsDone := make(chan struct{})
	go func() { wg.Wait(); close(bootsDone) }()

	want := map[string]bool{}
	expect := cfg.Machines
	res.Target = "New"
	if cfg.EnlistCommission {
		res.Target = "Ready"
	}
	for _, m := range ms {
		want[m.MACs[0]] = true
		if m.Silent && cfg.EnlistCommission {
			expect--
		}
	}
	var last listing
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	// Poll until every machine is NEW; once every boot has returned, a
	// few more looks (the API may lag a moment), then stop.
	var settle time.Time
	for res.AllNew == 0 && sctx.Err() == nil {
		select {
		case <-bootsDone:
			res.BootsDone = time.Since(start)
			logf("all boots returned after %s", res.BootsDone.Round(time.Millisecond))
			bootsDone, settle = nil, time.Now().Add(5*time.Second)
			continue
		case <-tick.C:
		case <-sctx.Done():
			continue
		}
		l, err := list(sctx, api, want)
		if err == nil {
			last = l
			if l.statuses[res.Target] == expect {
				res.AllNew = time.Since(start)
				logf("all %d %s after %s", expect, res.Target, res.AllNew.Round(time.Millisecond))
			}
		}
		if !settle.IsZero() && time.Now().After(settle) {
			break
		}
	}
	wg.Wait()
	if res.BootsDone == 0 {
		res.BootsDone = time.Since(start)
	}
	if l, err := list(ctx, api, want); err == nil {
		last = l
	}
	res.Enlisted, res.New, res.Statuses, res.Duplicates, res.Missing = last.machines, last.statuses[res.Target], last.statuses, last.dups, last.missing
	res.RSSPeakKiB = vmHWM(srv.pid())
	res.ServerUDPDrops = udpRcvbufErrors(tp.srvNS) - srvDrops0
	res.ClientUDPDrops = udpRcvbufErrors(tp.cliNS) - cliDrops0
	summariseStorm(&res)
	if res.AllNew == 0 {
		return res, fmt.Errorf("bootstorm: %d of %d machines %s (%v)", res.New, expect, res.Target, res.Statuses)
	}
	return res, nil
}

func summariseStorm(res *BootstormResult) {
	times := map[string][]time.Duration{}
	for _, r := range res.Results {
		res.Retries += r.DHCPRetries
		for s, d := range r.Times {
			if r.FailedStage != s {
				times[s] = append(times[s], d)
			}
		}
		if r.Err != nil {
			res.Errors[r.FailedStage]++
			if len(res.FirstErrs) < 5 {
				res.FirstErrs = append(res.FirstErrs, r.MAC+" "+r.FailedStage+": "+r.Err.Error())
			}
		}
	}
	for s, ds := range times {
		res.Stages[s] = summarise(ds)
	}
}

// listing is what the API says about the storm's machines.
type listing struct {
	machines, dups int
	statuses       map[string]int
	missing        []string
}

func list(ctx context.Context, api *caller, want map[string]bool) (listing, error) {
	b, err := api.get(ctx, "machines/")
	if err != nil {
		return listing{}, err
	}
	var ms []struct {
		SystemID   string `json:"system_id"`
		StatusName string `json:"status_name"`
		Interfaces []struct {
			MAC string `json:"mac_address"`
		} `json:"interface_set"`
	}
	if err := json.Unmarshal(b, &ms); err != nil {
		return listing{}, err
	}
	l := listing{statuses: map[string]int{}}
	seen := map[string]int{}
	for _, m := range ms {
		ours := false
		for _, nic := range m.Interfaces {
			mac := strings.ToLower(nic.MAC)
			seen[mac]++
			if want[mac] {
				ours = true
			}
		}
		if ours {
			l.machines++
			l.statuses[m.StatusName]++
		}
	}
	for _, n := range seen {
		if n > 1 {
			l.dups++
		}
	}
	for mac := range want {
		if seen[mac] == 0 {
			l.missing = append(l.missing, mac)
		}
	}
	slices.Sort(l.missing)
	return l, nil
}

// waitDHCP completes DHCP for a probe MAC outside the storm's block
// until the rack answers (it learns the subnet from the region).
func waitDHCP(ctx context.Context, nw *simboot.Net) error {
	deadline := time.Now().Add(30 * time.Second)
	m := &simboot.Machine{MACs: []string{"02:a6:00:00:00:01"}}
	for time.Now().Before(deadline) {
		if err := m.DHCPOnly(ctx, simboot.Config{Net: nw, DHCPTimeout: 300 * time.Millisecond, DHCPAttempts: 1}); err == nil {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return errors.New("bootstorm: the rack's DHCP never answered")
}

func waitUpWith(ctx context.Context, hc *http.Client, u string, c *child) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if c.exited() {
			return fmt.Errorf("anvil serve exited: %s", c.output())
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("anvil serve did not come up: %s", c.output())
}

func writeRandom(path string, n int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.CopyN(f, rand.NewChaCha8([32]byte{'s', 'i', 'm'}), n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// udpRcvbufErrors reads Udp RcvbufErrors from a namespace's
// /proc/net/snmp (0 when unreadable).
func udpRcvbufErrors(ns string) int64 {
	b, err := exec.Command("ip", "netns", "exec", ns, "cat", "/proc/net/snmp").Output()
	if err != nil {
		return 0
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if n == "RcvbufErrors" && i < len(f) {
				v, _ := strconv.ParseInt(f[i], 10, 64)
				return v
			}
		}
	}
	return 0
}

// vmHWM is a process's peak resident set, in KiB (0 when unreadable).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// BootstormMarkdown renders the result.
func BootstormMarkdown(r BootstormResult) string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "%d simulated machines booting at once (kernel %d KiB, initrd %d KiB, DHCP drop share %.2f, silent share %.2f, db %s)\n\n",
		c.Machines, c.KernelBytes>>10, c.InitrdBytes>>10, c.DropDHCP, c.Silent, dbLabel(c.DBURL))
	b.WriteString("| figure | value |\n|---|---|\n")
	allNew := "never"
	if r.AllNew > 0 {
		allNew = fmt.Sprintf("%.2f s", r.AllNew.Seconds())
	}
	target := r.Target
	if target == "" {
		target = "New"
	}
	fmt.Fprintf(&b, "| all machines %s after | %s |\n", target, allNew)
	fmt.Fprintf(&b, "| all boots returned after | %.2f s |\n", r.BootsDone.Seconds())
	fmt.Fprintf(&b, "| enlisted / expected | %d / %d |\n", r.Enlisted, c.Machines)
	var sts []string
	for st, n := range r.Statuses {
		sts = append(sts, fmt.Sprintf("%s %d", st, n))
	}
	slices.Sort(sts)
	fmt.Fprintf(&b, "| %s | %d (all: %s) |\n", target, r.New, strings.Join(sts, ", "))
	fmt.Fprintf(&b, "| duplicated MACs | %d |\n", r.Duplicates)
	fmt.Fprintf(&b, "| DHCP retransmissions | %d |\n", r.Retries)
	fmt.Fprintf(&b, "| UDP receive-buffer drops: server / simulator | %d / %d |\n", r.ServerUDPDrops, r.ClientUDPDrops)
	for _, s := range simboot.Stages {
		fmt.Fprintf(&b, "| errors: %s | %d |\n", s, r.Errors[s])
	}
	fmt.Fprintf(&b, "| region RSS peak | %.0f MiB |\n", float64(r.RSSPeakKiB)/1024)
	b.WriteString("\n| stage | p50 ms | p99 ms | max ms |\n|---|---|---|---|\n")
	for _, s := range simboot.Stages {
		l, ok := r.Stages[s]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.1f |\n", s, msOf(l.P50), msOf(l.P99), msOf(l.Max))
	}
	for _, e := range r.FirstErrs {
		fmt.Fprintf(&b, "\nerror: %s", e)
	}
	if len(r.FirstErrs) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

func dbLabel(u string) string {
	if u == "" {
		return "sqlite"
	}
	return "postgres"
}
