package dhcp

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// perfSection matches one "Statistics for: X" block's counters.
var perfSection = regexp.MustCompile(`(?s)Statistics for: (\S+?)\*+\s+sent packets: (\d+)\s+received packets: (\d+)\s+drops: (\d+)`)

// runPerfdhcp loads the server with Kea's perfdhcp: 100 DORA exchanges a
// second from 500 simulated clients for 10 s (ANVIL_PERFDHCP_RATE
// overrides the rate, to find the ceiling by hand). perfdhcp acts as a
// relay with the client interface's 198.18.0.2 as giaddr, so leases come
// from the /15 and replies go back unicast to port 67.
func runPerfdhcp(t *testing.T, tp *topo, r *running) {
	needBinary(t, "perfdhcp", "kea-admin")
	defer r.logEvents(t)
	rate := "100"
	if v := os.Getenv("ANVIL_PERFDHCP_RATE"); v != "" {
		rate = v
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	before := r.srv.Stats()
	out, err := nsCommand(ctx, tp, "perfdhcp", "-4", "-r", rate, "-R", "500", "-p", "10", "-l", tp.cliIf).CombinedOutput()
	// Exit status 3 means "some exchanges not completed": judged below.
	if err != nil && !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("perfdhcp: %v\n%s", err, out)
	}
	secs := perfSection.FindAllStringSubmatch(string(out), -1)
	if len(secs) != 2 {
		t.Fatalf("cannot read perfdhcp output:\n%s", out)
	}
	for _, m := range secs {
		sent, _ := strconv.Atoi(m[2])
		recv, _ := strconv.Atoi(m[3])
		drops, _ := strconv.Atoi(m[4])
		ratio := float64(drops) / float64(max(sent, 1))
		t.Logf("perfdhcp %s at %s/s: sent %d received %d drops %d (%.2f%%)", m[1], rate, sent, recv, drops, 100*ratio)
		if sent < 100 || ratio > 0.05 {
			t.Errorf("%s: %d sent, %d dropped", m[1], sent, drops)
		}
	}
	after := r.srv.Stats()
	t.Logf("server: %d offers, %d acks, drops %v", after.Offers-before.Offers, after.Acks-before.Acks, after.Drops)
	ls, err := r.store.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	n := 0
	for _, l := range ls {
		// perfdhcp's simulated MACs start from its base 00:0c:01:...
		if l.MAC[0] == 0 && l.MAC[1] == 0x0c && l.State == StateBound {
			n++
			if seen[l.IP.String()] {
				t.Errorf("address %s leased twice", l.IP)
			}
			seen[l.IP.String()] = true
		}
	}
	if n < 400 || n > 500 {
		t.Errorf("%d bound leases for 500 perfdhcp clients", n)
	}
}
