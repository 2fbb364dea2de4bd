package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// BenchmarkSectionPages1k measures the pages that read more than one
// machine's worth with 1,000 deployed machines on SQLite, each seen with
// an address: the DNS page (it builds every zone the racks serve), a
// lookup, the network page and one machine's page with its network,
// storage and results sections. Run with
//
//	go test -run '^$' -bench SectionPages1k -benchtime 50x ./internal/ui/
func BenchmarkSectionPages1k(b *testing.B) {
	s := start(b)
	ctx := context.Background()
	now := time.Now().UTC()
	for i := range 1000 {
		m := &machine.Machine{
			SystemID: fmt.Sprintf("m%04d", i), Hostname: fmt.Sprintf("node-%04d", i), Architecture: "amd64/generic",
			Status: machine.Deployed, PowerType: "manual", PowerState: machine.PowerOn, Zone: "default", Pool: "default",
			Interfaces: []machine.Interface{
				{Name: "eth0", MAC: fmt.Sprintf("52:54:01:00:%02x:%02x", byte(i>>8), byte(i)), Boot: true},
				{Name: "eth1", MAC: fmt.Sprintf("52:54:02:00:%02x:%02x", byte(i>>8), byte(i))},
			},
			Created: now, Updated: now,
		}
		if err := s.srv.Store.CreateMachine(ctx, m, nil); err != nil {
			b.Fatal(err)
		}
		ip := fmt.Sprintf("10.1.%d.%d", byte(i>>8), byte(i))
		if err := s.srv.Store.NoteDiscovery(ctx, store.Discovery{MAC: m.Interfaces[0].MAC, IP: ip, LastWhat: "dhcp ack " + ip}); err != nil {
			b.Fatal(err)
		}
	}
	c := newClient(b)
	s.login(c, "ada", adaPass)
	for _, p := range []string{"/MAAS/dns", "/MAAS/dns?q=node-0500.maas&type=A", "/MAAS/network", "/MAAS/machine/m0500"} {
		b.Run(p, func(b *testing.B) { s.latencies(b, c, p) })
	}
}

// latencies GETs path once per iteration and reports the median and
// 99th percentile latency.
func (s *site) latencies(b *testing.B, c *http.Client, path string) {
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		code, _, _ := s.do(c, "GET", path, nil, nil)
		lat = append(lat, time.Since(t0))
		if code != http.StatusOK {
			b.Fatalf("GET %s: status %d", path, code)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
