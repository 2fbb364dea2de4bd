package rack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/metadata"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/serve"
)

// flood asks for each name from the addresses in turn, a few at once,
// and returns how many were served (the rest were refused).
func (n *bootNet) flood(addrs []string, names []string) int {
	var mu sync.Mutex
	served := 0
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				resp, err := n.from(addrs[i%len(addrs)]).Get(bootBase + "/" + names[i])
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					mu.Lock()
					served++
					mu.Unlock()
				}
			}
		}()
	}
	for i := range names {
		work <- i
	}
	close(work)
	wg.Wait()
	return served
}

// events are a machine's events, at most 1000 (the query's limit).
func events(t *testing.T, cl *client.Client, systemID string) []client.Event {
	t.Helper()
	page, err := cl.QueryEvents(context.Background(), url.Values{"id": {systemID}, "limit": {"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	return page.Events
}

func discoveries(t *testing.T, cl *client.Client) int {
	t.Helper()
	raw, err := cl.Do(context.Background(), "GET", "discoveries/", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ds []map[string]any
	if err := json.Unmarshal(raw, &ds); err != nil {
		t.Fatal(err)
	}
	return len(ds)
}

// TestBootConfigFloodIsBounded performs the attack on a running region
// and a rack serving its own DHCP: thousands of anonymous requests, from
// twenty addresses, for a commissioning machine's per-MAC config and for
// random MACs' configs. The machine's timeline and the discoveries stay
// small; the machine's real boot afterwards (its lease, its config) still
// shows on its timeline.
func TestBootConfigFloodIsBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, dbURL string) {
		n := newBootNet(t, dbURL)
		const victim = "52:54:00:c2:00:01"
		m, _ := n.commissioning("6f2c1f1e-0000-4000-8000-0000000000e1", victim)
		before := len(events(t, n.admin, m.SystemID))
		ds0 := discoveries(t, n.admin)

		var one, random []string
		for i := 0; i < 10; i++ {
			one = append(one, fmt.Sprintf("192.0.2.%d", 20+i))
			random = append(random, fmt.Sprintf("192.0.2.%d", 40+i))
		}
		for _, a := range append(append([]string(nil), one...), random...) {
			n.addr(a)
		}
		start := time.Now()
		var same, other []string
		for i := 0; i < 2000; i++ {
			same = append(same, "ipxe.cfg-"+victim)
			other = append(other, fmt.Sprintf("ipxe.cfg-02:00:%02x:%02x:%02x:%02x", i>>24&0xff, i>>16&0xff, i>>8&0xff, i&0xff))
		}
		served := n.flood(one, same)
		n.flood(random, other)
		waitFor(t, "the rack to report what it kept", func() bool { return n.rack.Reporter.Pending() == 0 })
		elapsed := time.Since(start)
		t.Logf("4000 requests in %s; %d of the machine's served", elapsed.Round(time.Millisecond), served)

		// The machine's own boot: its lease and its config.
		ip := n.lease(victim)
		n.config(ip, "grub/grub.cfg-"+victim)
		var evs []client.Event
		waitFor(t, "the real boot on the timeline", func() bool {
			evs = events(t, n.admin, m.SystemID)
			var dhcp, cfg bool
			for _, e := range evs {
				dhcp = dhcp || e.Type == "Boot dhcp" && strings.HasPrefix(e.Description, "ack "+ip)
				cfg = cfg || e.Type == "Boot config" && strings.Contains(e.Description, "grub/grub.cfg-"+victim)
			}
			return dhcp && cfg
		})
		// Besides the boot: what the flood gave its twenty addresses'
		// distinct steps, not one per request.
		if grew := len(evs) - before; grew > 40 {
			t.Fatalf("the machine's timeline grew by %d events for 2000 requests", grew)
		}
		bound := rack.UnknownTotalBurst + int(rack.UnknownTotalRate*elapsed.Seconds()) + 5
		if got := discoveries(t, n.admin) - ds0; got > bound {
			t.Fatalf("%d discoveries from 2000 requests in %s, more than %d", got, elapsed, bound)
		}
	})
}

// startRegion starts a region on loopback, and an administrator's client.
func startRegion(t *testing.T, dbURL string) (*serve.Server, *client.Client) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	srv, err := serve.Start(ctx, serve.Config{DataDir: dir, DBURL: dbURL, Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	key, err := serve.APIKey(ctx, dir, dbURL, "admin")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New("http://"+srv.Addr.String()+"/MAAS/", key)
	if err != nil {
		t.Fatal(err)
	}
	return srv, cl
}

// TestRegionBoundsBootEvents: the region does not trust a rack to have
// bounded what it reports. A rack (here the client, with its key) posts
// thousands of distinct steps of one machine, one step a thousand times,
// and thousands of random MACs; the region keeps a bounded number of
// each.
func TestRegionBoundsBootEvents(t *testing.T) {
	eachDB(t, func(t *testing.T, dbURL string) {
		ctx := context.Background()
		_, cl := startRegion(t, dbURL)
		const mac = "52:54:00:c3:00:01"
		m, err := cl.CreateMachine(ctx, url.Values{"hostname": {"flooded"}, "mac_addresses": {mac}})
		if err != nil {
			t.Fatal(err)
		}
		before := len(events(t, cl, m.SystemID))
		ds0 := discoveries(t, cl)
		post := func(evs []rack.BootEvent) {
			b, _ := json.Marshal(evs)
			if _, err := cl.Do(ctx, "POST", "rack/", url.Values{"op": {"boot_events"}}, url.Values{"events": {string(b)}}); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		now := time.Now()
		var repeated []rack.BootEvent
		for i := 0; i < 1000; i++ {
			repeated = append(repeated, rack.BootEvent{MAC: mac, Kind: "config", Detail: "config ipxe.cfg-" + mac + ": purpose ephemeral (status Commissioning)", At: now})
		}
		post(repeated)
		for b := 0; b < 3; b++ {
			var distinct, unknown []rack.BootEvent
			for i := 0; i < 1000; i++ {
				k := b*1000 + i
				distinct = append(distinct, rack.BootEvent{MAC: mac, Kind: "config", IP: "198.51.100.7", At: now,
					Detail: fmt.Sprintf("config asked for from 198.18.%d.%d, which does not hold %s", k>>8, k&0xff, mac)})
				unknown = append(unknown, rack.BootEvent{MAC: fmt.Sprintf("02:00:00:00:%02x:%02x", k>>8, k&0xff), Kind: "config", At: now,
					IP: fmt.Sprintf("198.18.%d.%d", k>>8, k&0xff), Detail: "asked for ipxe.cfg: unknown machine"})
			}
			post(distinct)
			post(unknown)
		}
		elapsed := time.Since(start)
		evs := events(t, cl, m.SystemID)
		bound := rack.BootEventBurst + int(rack.BootEventRate*elapsed.Seconds()) + 1
		if grew := len(evs) - before; grew > bound {
			t.Fatalf("4000 reported events in %s grew the timeline by %d, more than %d", elapsed, grew, bound)
		}
		n := 0
		for _, e := range evs {
			if strings.HasPrefix(e.Description, "config ipxe.cfg-"+mac) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("one step reported 1000 times is %d events", n)
		}
		dbound := rack.UnknownTotalBurst + int(rack.UnknownTotalRate*elapsed.Seconds())
		if got := discoveries(t, cl) - ds0; got > dbound {
			t.Fatalf("3000 unknown MACs in %s gave %d discoveries, more than %d", elapsed, got, dbound)
		}
	})
}

// TestAnonymousHelloFloodIsBounded performs the attack on a running
// region's metadata API: a thousand hellos naming a commissioning
// machine's MAC, from fifty loopback addresses (each within the
// per-address limit), add a bounded handful of lines to its timeline, not
// a thousand. Before the flood, hellos that say different things each
// get theirs, and one repeated from one address is one line.
func TestAnonymousHelloFloodIsBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, dbURL string) {
		ctx := context.Background()
		srv, cl := startRegion(t, dbURL)
		base := "http://" + srv.Addr.String()
		const mac = "52:54:00:c4:00:01"
		m, err := cl.CreateMachine(ctx, url.Values{"hostname": {"hailed"}, "mac_addresses": {mac}, "architecture": {"amd64/generic"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.MachineOp(ctx, m.SystemID, "commission", nil); err != nil {
			t.Fatal(err)
		}
		hello := func(addr, purpose string) {
			ag := &agentapi.Client{Base: base + metadata.Prefix, HTTP: from(addr)}
			ag.Hello(ctx, agentapi.HelloRequest{Identity: agentapi.Identity{MACs: []string{mac}, Arch: "amd64/generic"}, Purpose: purpose})
		}
		count := func(what string) (n, all int) {
			evs := events(t, cl, m.SystemID)
			for _, e := range evs {
				n += strings.Count(e.Description, what)
			}
			return n, len(evs)
		}
		for i := 0; i < 5; i++ {
			hello("127.0.20.1", "enlist")
		}
		hello("127.0.20.1", "ephemeral")
		if n, _ := count("booted the enlist environment"); n != 1 {
			t.Fatalf("one hello five times from one address: %d events", n)
		}
		if n, _ := count("booted the ephemeral environment without"); n != 1 {
			t.Fatalf("another claim: %d events", n)
		}
		_, before := count("")
		start := time.Now()
		var wg sync.WaitGroup
		for a := 0; a < 50; a++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					hello(fmt.Sprintf("127.0.%d.%d", 10+a/200, 1+a%200), "enlist")
				}
			}()
		}
		wg.Wait()
		_, after := count("")
		bound := region.AnonEventBurst + int(region.AnonEventRate*time.Since(start).Seconds()) + 1
		if after-before > bound {
			t.Fatalf("1000 anonymous hellos from 50 addresses added %d events, more than %d", after-before, bound)
		}
	})
}
