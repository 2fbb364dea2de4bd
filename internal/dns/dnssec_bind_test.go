package dns

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/dnszone"
)

// signedZones is BIND 9 serving, on a loopback port of its own, zones
// signed with dnssec-signzone: good.test (with an unsigned delegation,
// plain.good.test, served unsigned), bad.test (www's signature
// corrupted) and old.test (signatures expired); the DS records of their
// keys are the test's trust anchors.
func signedZones(t *testing.T) (upstream string, anchors []string) {
	t.Helper()
	for _, b := range []string{"named", "dnssec-keygen", "dnssec-signzone", "dnssec-dsfromkey", "dig"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("needs %s (Debian bind9, bind9-dnsutils)", b)
		}
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// named listens only on addresses interfaces hold: loopback's own,
	// on a port free for UDP and TCP a moment ago.
	addr, port := "127.0.0.1", freePort(t)
	zones := map[string]string{
		"good.test":       "www A 192.0.2.80\nplain NS ns.plain.good.test.\nns.plain A " + addr + "\n",
		"bad.test":        "www A 192.0.2.81\n",
		"old.test":        "www A 192.0.2.82\n",
		"plain.good.test": "www A 192.0.2.83\n",
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, "controls { };\noptions { directory %q; listen-on port %s { %s; }; listen-on-v6 { none; }; recursion no; dnssec-validation no; pid-file none; };\n", dir, port, addr)
	for zone, body := range zones {
		file := zone + ".zone"
		os.WriteFile(filepath.Join(dir, file), []byte(fmt.Sprintf("$TTL 300\n@ SOA ns.%s. hostmaster.%s. 1 600 300 86400 60\n@ NS ns.%s.\nns A %s\n%s", zone, zone, zone, addr, body)), 0o644)
		if zone != "plain.good.test" {
			ksk := run("dnssec-keygen", "-q", "-a", "ECDSAP256SHA256", "-f", "KSK", "-K", dir, zone)
			run("dnssec-keygen", "-q", "-a", "ECDSAP256SHA256", "-K", dir, zone)
			args := []string{"dnssec-signzone", "-q", "-S", "-K", dir, "-O", "full", "-o", zone, "-f", file + ".signed"}
			if zone == "old.test" {
				args = append(args, "-P", "-s", "20200101000000", "-e", "20200201000000") // -P: no check, it would refuse them
			}
			run(append(args, file)...)
			anchors = append(anchors, run("dnssec-dsfromkey", "-2", ksk+".key"))
			file += ".signed"
		}
		if zone == "bad.test" {
			corrupt(t, filepath.Join(dir, file), "www.bad.test.")
		}
		fmt.Fprintf(&conf, "zone %q { type primary; file %q; };\n", zone, file)
	}
	os.WriteFile(filepath.Join(dir, "named.conf"), []byte(conf.String()), 0o644)
	named := exec.Command("named", "-g", "-c", filepath.Join(dir, "named.conf"))
	var log strings.Builder
	named.Stdout, named.Stderr = &log, &log
	if err := named.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { named.Process.Kill(); named.Wait() })
	upstream = addr + ":" + port
	// named loads zones in the background: wait for every one.
	deadline := time.Now().Add(15 * time.Second)
	for zone := range zones {
		for {
			out, _ := exec.Command("dig", "@"+addr, "-p", port, "+short", "+time=1", "+tries=1", zone, "SOA").Output()
			if strings.HasPrefix(string(out), "ns."+zone+".") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("named did not serve %s (%q):\n%s", zone, out, log.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return upstream, anchors
}

func freePort(t *testing.T) string {
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := net.SplitHostPort(pc.LocalAddr().String())
		ln, err := net.Listen("tcp", "127.0.0.1:"+port)
		pc.Close()
		if err == nil {
			ln.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return ""
}

// corrupt flips a character in the signature of owner's A RRSIG.
func corrupt(t *testing.T, file, owner string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	done := false
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) > 12 && f[0] == owner && f[3] == "RRSIG" && f[4] == "A" {
			sig := []byte(f[len(f)-1])
			sig[3] ^= 0x01 // base64 letters stay letters
			f[len(f)-1] = string(sig)
			lines[i], done = strings.Join(f, " "), true
		}
	}
	if !done {
		t.Fatalf("no RRSIG A for %s in %s", owner, file)
	}
	os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644)
}

var digFlags = regexp.MustCompile(`flags: ([a-z ]+);`)

// digAt asks Anvil's DNS at addr with Debian's dig: the status, the
// header's flags and the answer lines.
func digAt(t *testing.T, addr, name string) (status, flags string, answer []string) {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	out, err := exec.Command("dig", "@"+host, "-p", port, "+time=5", "+tries=1", "+nocmd", "+noquestion", "+nostats", name, "A").CombinedOutput()
	if err != nil && !strings.Contains(string(out), "status:") {
		t.Fatalf("dig %s: %v\n%s", name, err, out)
	}
	if m := regexp.MustCompile(`status: ([A-Z]+)`).FindStringSubmatch(string(out)); m != nil {
		status = m[1]
	}
	if m := digFlags.FindStringSubmatch(string(out)); m != nil {
		flags = m[1]
	}
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && !strings.HasPrefix(l, ";") {
			answer = append(answer, strings.Join(strings.Fields(l), " "))
		}
	}
	return status, flags, answer
}

// TestDNSSECWithBIND: forwarding to BIND serving signed zones, with the
// test's trust anchors, a good signed answer gets AD, an answer below an
// unsigned delegation passes without it, and a corrupted or expired
// signature is SERVFAIL; with dnssec_validation "no" the corrupted answer
// passes as BIND gives it.
func TestDNSSECWithBIND(t *testing.T) {
	upstream, anchors := signedZones(t)
	d := sampleData()
	d.Upstream = []string{upstream}
	d.DNSSEC = "yes"
	d.Zones.Subnets = append(d.Zones.Subnets, dnszone.Subnet{CIDR: netip.MustParsePrefix("127.0.0.0/8")})
	s, addr := serve(t, d)
	if err := s.SetTrustAnchors(anchors); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, status string
		ad           bool
		want         string
	}{
		{"www.good.test", "NOERROR", true, "www.good.test. 300 IN A 192.0.2.80"},
		{"www.plain.good.test", "NOERROR", false, "www.plain.good.test. 300 IN A 192.0.2.83"},
		{"nothere.good.test", "NXDOMAIN", true, ""},
		{"www.bad.test", "SERVFAIL", false, ""},
		{"www.old.test", "SERVFAIL", false, ""},
	}
	for _, c := range cases {
		status, flags, answer := digAt(t, addr, c.name)
		ad := strings.Contains(" "+flags+" ", " ad ")
		// Anvil's own SERVFAIL offers recursion; BIND's (a zone it
		// failed to load) would not.
		mine := c.status != "SERVFAIL" || strings.Contains(" "+flags+" ", " ra ")
		if status != c.status || ad != c.ad || !mine || c.want != "" && (len(answer) == 0 || answer[0] != c.want) {
			t.Errorf("%s: %s flags %q %q; want %s, AD %v, %q", c.name, status, flags, answer, c.status, c.ad, c.want)
		}
	}
	d.DNSSEC = "no"
	s.Set(d)

	status, flags, answer := digAt(t, addr, "www.bad.test")
	if status != "NOERROR" || strings.Contains(" "+flags+" ", " ad ") || len(answer) == 0 || answer[0] != "www.bad.test. 300 IN A 192.0.2.81" {
		t.Errorf("not validating, www.bad.test: %s %q %q; want it as BIND gives it", status, flags, answer)
	}
}
