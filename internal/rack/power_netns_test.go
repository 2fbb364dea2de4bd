package rack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
	tnetns "github.com/anvilmetal/anvil/internal/testutil/netns"
	"github.com/anvilmetal/anvil/internal/testutil/simbmc"
)

func hostIP(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %v: %v: %s", args, err, out)
	}
}

// powerRack is a rack process.
type powerRack struct {
	id   string
	cmd  *exec.Cmd
	logs *bytes.Buffer
}

func startPowerRack(t *testing.T, base, key, id, ns string, nets ...string) *powerRack {
	t.Helper()
	b, _ := json.Marshal(childRack{Region: base, Key: key, ID: id, Networks: nets, Netns: ns})
	r := &powerRack{id: id, logs: &bytes.Buffer{}}
	r.cmd = exec.Command(os.Args[0], "-test.run=^$")
	r.cmd.Env = append(os.Environ(), powerRackEnv+"="+string(b))
	r.cmd.Stdout, r.cmd.Stderr = r.logs, r.logs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		if t.Failed() {
			t.Logf("rack %s:\n%s", id, r.logs.String())
		}
	})
	return r
}

// link connects rack namespace rk to the BMC network's bridge in bmcNS,
// the rack's end at addr.
func link(t *testing.T, rk, bmcNS *tnetns.NS, name, addr string) {
	t.Helper()
	hostIP(t, "link", "add", name+"r", "type", "veth", "peer", "name", name+"b")
	hostIP(t, "link", "set", name+"r", "netns", rk.Name)
	hostIP(t, "link", "set", name+"b", "netns", bmcNS.Name)
	rk.Ip("addr", "add", addr+"/25", "dev", name+"r")
	rk.Ip("link", "set", name+"r", "up")
	bmcNS.Ip("link", "set", name+"b", "master", "br0", "up")
}

// TestRacksRunPowerForTheirNetworks: two BMC networks in namespaces of
// their own, 192.0.2.0/25 and 192.0.2.128/25, each reached by its racks
// only; racks are processes whose BMC traffic leaves from their own
// namespace. Commands go to the rack that reaches the BMC (the BMC's log
// shows only that rack's address), a command for a BMC no rack reaches is
// refused at once with the words, and when a rack is killed mid-burst a
// second rack on the same network takes its commands over after the
// lease runs out, resuming them without sending any twice.
func TestRacksRunPowerForTheirNetworks(t *testing.T) {
	if _, err := exec.LookPath("ipmi_sim"); err != nil {
		t.Skip("ipmi_sim is not installed (Debian package openipmi; scripts/test.sh installs it)")
	}
	pid := os.Getpid() % 100000
	netA := tnetns.New(t, fmt.Sprintf("rpna%d", pid))
	netB := tnetns.New(t, fmt.Sprintf("rpnb%d", pid))
	for _, n := range []*tnetns.NS{netA, netB} {
		n.Ip("link", "add", "br0", "type", "bridge")
		n.Ip("link", "set", "br0", "up")
	}
	rkA1, rkA2, rkB := tnetns.New(t, fmt.Sprintf("rpa1%d", pid)), tnetns.New(t, fmt.Sprintf("rpa2%d", pid)), tnetns.New(t, fmt.Sprintf("rpb%d", pid))
	link(t, rkA1, netA, fmt.Sprintf("p1%d", pid), "192.0.2.2")
	link(t, rkA2, netA, fmt.Sprintf("p2%d", pid), "192.0.2.3")
	link(t, rkB, netB, fmt.Sprintf("p3%d", pid), "192.0.2.130")
	bmc := func(ns *tnetns.NS, addr string, delay int) *simbmc.BMC {
		return simbmc.Start(t, simbmc.Config{NS: ns, Addr: addr, Bits: 25, Delay: delay})
	}
	bmcsA := []*simbmc.BMC{bmc(netA, "192.0.2.10", 2), bmc(netA, "192.0.2.11", 2), bmc(netA, "192.0.2.12", 2)}
	bmcB := bmc(netB, "192.0.2.140", 0)

	ctx := context.Background()
	dir := t.TempDir()
	const lease = 3 * time.Second
	srv, err := serve.Start(ctx, serve.Config{DataDir: dir, Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Power: power.Config{Lease: lease}, RackPower: serve.RackPower{Remote: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	base := "http://" + srv.Addr.String() + "/MAAS/"
	key, err := serve.APIKey(ctx, dir, "", "admin")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(base, key)
	if err != nil {
		t.Fatal(err)
	}
	a1 := startPowerRack(t, base, key, "rack-a1", rkA1.Name, "192.0.2.0/25")
	startPowerRack(t, base, key, "rack-b", rkB.Name, "192.0.2.128/25")
	waitLong(t, "both racks to ask for work", 20*time.Second, func() bool {
		rs, _ := srv.Store.RackPowers(ctx, time.Now().Add(-time.Minute))
		return len(rs) == 2
	})

	machines := 0
	add := func(name string, b *simbmc.BMC, addr string) string {
		t.Helper()
		machines++
		form := url.Values{"hostname": {name}, "architecture": {"amd64/generic"}, "mac_addresses": {fmt.Sprintf("52:54:00:77:00:%02x", machines)}}
		if b != nil {
			for k, v := range b.Params() {
				form[k] = v
			}
		} else {
			form.Set("power_type", "ipmi")
			form.Set("power_parameters_power_address", addr+":623")
			form.Set("power_parameters_power_user", "admin")
			form.Set("power_parameters_power_pass", simbmc.Password)
		}
		m, err := cl.CreateMachine(ctx, form)
		if err != nil {
			t.Fatal(err)
		}
		return m.SystemID
	}
	var idsA []string
	for i, b := range bmcsA {
		idsA = append(idsA, add(fmt.Sprintf("a%d", i), b, b.Addr))
	}
	idB := add("b0", bmcB, bmcB.Addr)

	// A BMC on a network no rack declares: refused at once, in words,
	// and the machine's events say so.
	lost := add("lost", nil, "198.51.100.77")
	t0 := time.Now()
	_, err = cl.MachineOp(ctx, lost, "power_on", nil)
	var ae *client.APIError
	if !asAPIError(err, &ae) || ae.Status != http.StatusServiceUnavailable || !strings.Contains(ae.Body, "no rack reaches BMC 198.51.100.77") {
		t.Fatalf("power on of an unreachable BMC: %v", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("the refusal took %s", d)
	}
	if q, _ := srv.Service.Power.Queue(ctx, lost); len(q) != 0 {
		t.Fatalf("the refused power on was queued: %+v", q)
	}
	evs, err := srv.Store.QueryEvents(ctx, store.EventFilter{SystemIDs: []string{lost}})
	if err != nil || !hasDescription(evs, "no rack reaches BMC 198.51.100.77") {
		t.Fatalf("no event for the refusal: %v %+v", err, evs)
	}

	// The burst: every machine powered on. Rack B's runs to the end; the
	// first rack on network A dies while its three are in flight.
	reqOf := map[string]string{}
	for _, id := range append(append([]string{}, idsA...), idB) {
		resp, err := cl.Do(ctx, http.MethodPost, "machines/"+id+"/", url.Values{"op": {"power_on"}}, url.Values{})
		if err != nil {
			t.Fatalf("power on %s: %v", id, err)
		}
		_ = resp
		q, _ := srv.Service.Power.Queue(ctx, id)
		for _, r := range q {
			if r.Action == "on" {
				reqOf[id] = r.ID
			}
		}
		if reqOf[id] == "" {
			t.Fatalf("no power on queued for %s: %+v", id, q)
		}
	}
	waitLong(t, "rack a1 to send the three power ons", 20*time.Second, func() bool {
		for _, b := range bmcsA {
			if !strings.Contains(b.Calls(), "set power 1") {
				return false
			}
		}
		return true
	})
	if err := a1.cmd.Process.Kill(); err != nil { // SIGKILL: no goodbye
		t.Fatal(err)
	}
	killed := time.Now()
	_ = a1.cmd.Wait()
	startPowerRack(t, base, key, "rack-a2", rkA2.Name, "192.0.2.0/25")

	done := func(id string) store.PowerRequest {
		r, err := srv.Store.GetPowerRequest(ctx, reqOf[id])
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	waitLong(t, "every power on to end", 40*time.Second, func() bool {
		for id := range reqOf {
			if r := done(id); r.State != store.PowerDone && r.State != store.PowerFailed {
				return false
			}
		}
		return true
	})
	failover := time.Since(killed)
	t.Logf("after the kill, the second rack finished the commands in %s (lease %s)", failover.Round(10*time.Millisecond), lease)

	for _, id := range idsA {
		r := done(id)
		if r.State != store.PowerDone || r.LeaseOwner != power.RackOwner("rack-a2") || r.Attempts != 2 {
			t.Errorf("%s: %s by %s after %d attempts (%s)", id, r.State, r.LeaseOwner, r.Attempts, r.Error)
		}
	}
	if r := done(idB); r.State != store.PowerDone || r.LeaseOwner != power.RackOwner("rack-b") {
		t.Errorf("b0: %s by %s (%s)", r.State, r.LeaseOwner, r.Error)
	}
	for _, b := range bmcsA {
		// Sent once by the rack that died; its successor asked the BMC
		// first, found it on and sent nothing more.
		if n := strings.Count(b.Calls(), "set power 1"); n != 1 {
			t.Errorf("BMC %s got %d power ons:\n%s", b.Addr, n, b.Calls())
		}
		src := b.Sources()
		if src["192.0.2.2"] == 0 || src["192.0.2.3"] == 0 || len(src) != 2 {
			t.Errorf("BMC %s heard from %v; want the two racks of its network", b.Addr, src)
		}
	}
	if src := bmcB.Sources(); len(src) != 1 || src["192.0.2.130"] == 0 {
		t.Errorf("BMC %s heard from %v; want rack b only", bmcB.Addr, src)
	}
	if n := strings.Count(bmcB.Calls(), "set power 1"); n != 1 {
		t.Errorf("BMC %s got %d power ons", bmcB.Addr, n)
	}
	for _, id := range idsA {
		evs, _ := srv.Store.QueryEvents(ctx, store.EventFilter{SystemIDs: []string{id}})
		if !hasDescription(evs, "power is on") {
			t.Errorf("%s: no power on event: %+v", id, evs)
		}
	}
}

func asAPIError(err error, ae **client.APIError) bool {
	for err != nil {
		if e, ok := err.(*client.APIError); ok {
			*ae = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

func hasDescription(evs []machine.Event, s string) bool {
	for _, e := range evs {
		if strings.Contains(e.Description, s) {
			return true
		}
	}
	return false
}

func waitLong(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
