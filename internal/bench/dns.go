package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/anvilmetal/anvil/internal/dns"
	"github.com/anvilmetal/anvil/internal/dnszone"
)

// DNSConfig is what RunDNS needs.
type DNSConfig struct {
	Binary   string // anvil, re-run as the DNS server under test
	Machines int
	Duration time.Duration
	Clients  int // dnsperf -c
	Rounds   int // each server is measured this many times, in turns
	Out      io.Writer
}

// DNSRun is one server's figures.
type DNSRun struct {
	Server         string
	Round          int
	QPS            float64
	AvgLatencyMS   float64
	Lost, Sent     int
	RSSMiB         float64 // the server's resident memory with the zones loaded
	Records        int
	CheckedAnswers bool
}

// DNSResult is a whole run.
type DNSResult struct {
	Machines int
	Queries  int
	Runs     []DNSRun
	// EmptyRSSMiB is Anvil's server process with no machines: the
	// records' share of its memory is the difference.
	EmptyRSSMiB float64
	// IdleRSSMiB is each server's with the zones loaded, before queries.
	IdleRSSMiB []float64
}

// DNSZoneInput is the zone of n machines the bench serves: each with a
// boot address in 198.18.0.0/15 and one more interface, in the maas
// domain, with reverse zones.
func DNSZoneInput(n int) dnszone.Input {
	in := dnszone.Input{Serial: 1, DefaultTTL: 30,
		Domains: []dnszone.Domain{{Name: "maas", Authoritative: true}},
		Subnets: []dnszone.Subnet{{CIDR: netip.MustParsePrefix("198.18.0.0/16"), RDNS: dnszone.RDNSEnabled},
			{CIDR: netip.MustParsePrefix("198.19.0.0/16"), RDNS: dnszone.RDNSEnabled}},
		NS: []dnszone.NameServer{{Name: "rack1.maas.", IP: netip.MustParseAddr("198.18.255.254")}},
	}
	for i := range n {
		a := netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)})
		b := netip.AddrFrom4([4]byte{198, 19, byte(i >> 8), byte(i)})
		in.Hosts = append(in.Hosts, dnszone.Host{Name: fmt.Sprintf("node%05d", i), Domain: "maas",
			Addrs: []dnszone.HostAddr{{Iface: "eth0", Boot: true, IP: a}, {Iface: "eth1", IP: b}}})
	}
	return in
}

// dnsQueries is dnsperf's query file: names of machines (A), their
// other interfaces, reverse names (PTR) and names that do not exist.
func dnsQueries(n int) string {
	var b strings.Builder
	for i := range n {
		switch i % 4 {
		case 0, 1:
			fmt.Fprintf(&b, "node%05d.maas A\n", i)
		case 2:
			fmt.Fprintf(&b, "%d.%d.18.198.in-addr.arpa PTR\n", i&0xff, i>>8&0xff)
		case 3:
			if i%8 == 3 {
				fmt.Fprintf(&b, "eth1.node%05d.maas A\n", i)
			} else {
				fmt.Fprintf(&b, "missing%05d.maas A\n", i)
			}
		}
	}
	return b.String()
}

// ServeDNSZone is the bench's Anvil DNS server: the rack's server with a
// zone of n machines, in a process of its own so its memory is its own.
func ServeDNSZone(ctx context.Context, n int, listen string, out io.Writer) error {
	s := dns.New(nil)
	// dnsperf asks from one address, far over a client's rate: the bench
	// measures answering, as BIND's (configured without rate-limit) does.
	s.SetLimits(dns.Limits{RRLRate: -1})
	s.Set(dns.Data{Zones: DNSZoneInput(n)})
	runtime.GC()
	addr, err := s.ListenAndServe(ctx, listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "listening %s\n", addr)
	<-ctx.Done()
	return nil
}

// zoneFiles writes the zones as BIND zone files and a named.conf serving
// them on port.
func zoneFiles(dir string, zs *dnszone.Zones, port int) (string, int, error) {
	conf := fmt.Sprintf(`options {
	directory "%s";
	pid-file "%s/named.pid";
	session-keyfile "%s/session.key";
	listen-on port %d { 127.0.0.1; };
	listen-on-v6 { none; };
	recursion no;
	allow-transfer { none; };
	notify no;
	dnssec-validation no;
};
controls { };
`, dir, dir, dir, port)
	records := 0
	for i, name := range zs.Names() {
		z := zs.Find(name)
		file := fmt.Sprintf("zone%d.db", i)
		f, err := os.Create(filepath.Join(dir, file))
		if err != nil {
			return "", 0, err
		}
		w := bufio.NewWriter(f)
		rrs := z.Transfer()
		for _, rr := range rrs[:len(rrs)-1] {
			fmt.Fprintln(w, rr.String())
		}
		records += len(rrs) - 1
		if err := w.Flush(); err != nil {
			return "", 0, err
		}
		f.Close()
		conf += fmt.Sprintf("zone %q { type primary; file %q; };\n", name, file)
	}
	path := filepath.Join(dir, "named.conf")
	return path, records, os.WriteFile(path, []byte(conf), 0o644)
}

func freeUDPPort() (int, error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port, nil
}

// RunDNS serves the same zone of cfg.Machines machines from Anvil's DNS
// server and from BIND 9's named, on loopback ports, checks that both give
// the same answers, and measures each with dnsperf, taking turns for
// cfg.Rounds rounds so that a neighbour's load falls on both alike.
func RunDNS(ctx context.Context, cfg DNSConfig) (DNSResult, error) {
	res := DNSResult{Machines: cfg.Machines}
	for _, tool := range []string{"dnsperf", "named"} {
		if _, err := exec.LookPath(tool); err != nil {
			return res, fmt.Errorf("%s is not installed (Debian's dnsperf and bind9): %w", tool, err)
		}
	}
	dir, err := os.MkdirTemp("", "anvil-bench-dns-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	queries := dnsQueries(cfg.Machines)
	res.Queries = strings.Count(queries, "\n")
	qfile := filepath.Join(dir, "queries.txt")
	if err := os.WriteFile(qfile, []byte(queries), 0o644); err != nil {
		return res, err
	}
	zs := dnszone.Build(DNSZoneInput(cfg.Machines))
	if res.EmptyRSSMiB, err = emptyRSS(ctx, cfg.Binary); err != nil {
		return res, err
	}
	type server struct {
		name    string
		addr    string
		port    int
		cmd     *exec.Cmd
		records int
	}
	var servers []*server
	defer func() {
		for _, sv := range servers {
			_ = sv.cmd.Process.Kill()
			_ = sv.cmd.Wait()
		}
	}()
	for _, name := range []string{"Anvil (rack DNS)", "BIND 9 (named)"} {
		port, err := freeUDPPort()
		if err != nil {
			return res, err
		}
		sv := &server{name: name, port: port, addr: fmt.Sprintf("127.0.0.1:%d", port)}
		if len(servers) == 0 {
			sv.cmd = exec.CommandContext(ctx, cfg.Binary, "bench", "dns", "serve-zone", "--machines", strconv.Itoa(cfg.Machines), "--listen", sv.addr)
		} else {
			conf, n, err := zoneFiles(dir, zs, port)
			if err != nil {
				return res, err
			}
			sv.records = n
			sv.cmd = exec.CommandContext(ctx, "named", "-g", "-c", conf, "-n", strconv.Itoa(runtime.NumCPU()))
		}
		sv.cmd.Stdout, sv.cmd.Stderr = io.Discard, io.Discard
		if err := sv.cmd.Start(); err != nil {
			return res, fmt.Errorf("start %s: %w", name, err)
		}
		servers = append(servers, sv)
		if err := waitDNS(ctx, sv.addr, 30*time.Second); err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
		res.IdleRSSMiB = append(res.IdleRSSMiB, rssMiB(sv.cmd.Process.Pid))
	}
	want, err := sampleAnswers(servers[0].addr, cfg.Machines)
	if err != nil {
		return res, err
	}
	got, err := sampleAnswers(servers[1].addr, cfg.Machines)
	if err != nil {
		return res, err
	}
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		return res, fmt.Errorf("BIND answers differently:\n%s\nfrom Anvil:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	servers[0].records = servers[1].records
	for round := 1; round <= max(cfg.Rounds, 1); round++ {
		for _, sv := range servers {
			run := DNSRun{Server: sv.name, Round: round, Records: sv.records, CheckedAnswers: true}
			fmt.Fprintf(cfg.Out, "== round %d: %s on %s, dnsperf for %s\n", round, sv.name, sv.addr, cfg.Duration)
			out, err := exec.CommandContext(ctx, "dnsperf", "-s", "127.0.0.1", "-p", strconv.Itoa(sv.port), "-d", qfile,
				"-l", strconv.Itoa(int(cfg.Duration.Seconds())), "-c", strconv.Itoa(cfg.Clients), "-q", "500").CombinedOutput()
			if err != nil {
				return res, fmt.Errorf("dnsperf against %s: %v\n%s", sv.name, err, out)
			}
			if err := parseDnsperf(string(out), &run); err != nil {
				return res, fmt.Errorf("%s: %w\n%s", sv.name, err, out)
			}
			// Resident memory after the load, with the zones in use.
			run.RSSMiB = rssMiB(sv.cmd.Process.Pid)
			res.Runs = append(res.Runs, run)
		}
	}
	return res, nil
}

// emptyRSS is the resident memory of Anvil's bench server with no
// machines.
func emptyRSS(ctx context.Context, bin string) (float64, error) {
	port, err := freeUDPPort()
	if err != nil {
		return 0, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.CommandContext(ctx, bin, "bench", "dns", "serve-zone", "--machines", "0", "--listen", addr)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if err := waitDNS(ctx, addr, 30*time.Second); err != nil {
		return 0, err
	}
	return rssMiB(cmd.Process.Pid), nil
}

func waitDNS(ctx context.Context, addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	m := new(mdns.Msg)
	m.SetQuestion("maas.", mdns.TypeSOA)
	for {
		if r, err := mdns.Exchange(m, addr); err == nil && r.Rcode == mdns.RcodeSuccess && len(r.Answer) == 1 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no answer on %s within %s", addr, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sampleAnswers asks a few names of each kind, for comparing servers.
func sampleAnswers(addr string, n int) ([]string, error) {
	var out []string
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"node00000.maas.", mdns.TypeA}, {fmt.Sprintf("node%05d.maas.", n-1), mdns.TypeA}, {"eth1.node00001.maas.", mdns.TypeA},
		{"1.0.18.198.in-addr.arpa.", mdns.TypePTR}, {"missing.maas.", mdns.TypeA}, {"maas.", mdns.TypeNS}, {"node00000.maas.", mdns.TypeMX},
	} {
		m := new(mdns.Msg)
		m.SetQuestion(q.name, q.qtype)
		r, err := mdns.Exchange(m, addr)
		if err != nil {
			return nil, err
		}
		line := fmt.Sprintf("%s %s: %s aa=%v", q.name, mdns.TypeToString[q.qtype], mdns.RcodeToString[r.Rcode], r.Authoritative)
		for _, rr := range r.Answer {
			line += " | " + rr.String()
		}
		for _, rr := range r.Ns {
			line += " | ns " + rr.String()
		}
		out = append(out, line)
	}
	return out, nil
}

var (
	dnsperfQPS  = regexp.MustCompile(`Queries per second:\s+([0-9.]+)`)
	dnsperfSent = regexp.MustCompile(`Queries sent:\s+(\d+)`)
	dnsperfLost = regexp.MustCompile(`Queries lost:\s+(\d+)`)
	dnsperfLat  = regexp.MustCompile(`Average Latency \(s\):\s+([0-9.]+)`)
)

func parseDnsperf(out string, run *DNSRun) error {
	m := dnsperfQPS.FindStringSubmatch(out)
	if m == nil {
		return fmt.Errorf("no queries per second in dnsperf's output")
	}
	run.QPS, _ = strconv.ParseFloat(m[1], 64)
	if m := dnsperfSent.FindStringSubmatch(out); m != nil {
		run.Sent, _ = strconv.Atoi(m[1])
	}
	if m := dnsperfLost.FindStringSubmatch(out); m != nil {
		run.Lost, _ = strconv.Atoi(m[1])
	}
	if m := dnsperfLat.FindStringSubmatch(out); m != nil {
		s, _ := strconv.ParseFloat(m[1], 64)
		run.AvgLatencyMS = s * 1000
	}
	return nil
}

// rssMiB is a process's resident memory (VmRSS).
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// DNSMarkdown is the result as BENCHMARKS.md shows it.
func DNSMarkdown(r DNSResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "DNS: %d machines (two interfaces each: A, PTR), %d queries cycled (half A of machines, a quarter PTR, a quarter NXDOMAIN or a second interface), dnsperf on loopback\n\n", r.Machines, r.Queries)
	b.WriteString("| round | server | records | queries/s | avg latency | lost | resident memory after |\n|---:|---|---:|---:|---:|---:|---:|\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "| %d | %s | %d | %.0f | %.2f ms | %d of %d | %.1f MiB |\n", run.Round, run.Server, run.Records, run.QPS, run.AvgLatencyMS, run.Lost, run.Sent, run.RSSMiB)
	}
	if len(r.IdleRSSMiB) == 2 {
		fmt.Fprintf(&b, "\nResident memory with the zones loaded, before any query: Anvil %.1f MiB, BIND %.1f MiB. Anvil's server with no machines holds %.1f MiB: the %d machines' records take %.1f MiB of the rack.\n",
			r.IdleRSSMiB[0], r.IdleRSSMiB[1], r.EmptyRSSMiB, r.Machines, r.IdleRSSMiB[0]-r.EmptyRSSMiB)
	}
	return b.String()
}
