package rack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
	tnetns "github.com/anvilmetal/anvil/internal/testutil/netns"
)

// The chassis of an ipmi_sim BMC: a script keeping the power state in
// files and logging every call. A power on is recorded at once and takes
// effect $delay seconds later, as a real server takes a moment to come
// up: the command is then in its verification, in flight, for a while.
const simChassis = `#!/bin/sh
d=$1; delay=$2; op=$3; shift 3
echo "$op $*" >> "$d/calls"
case $op in
get) for k in "$@"; do
       v=$(cat "$d/$k" 2>/dev/null)
       [ -n "$v" ] || { [ "$k" = boot ] && v=none || v=0; }
       printf '%s:%s\n' "$k" "$v"
     done ;;
set) while [ $# -ge 2 ]; do
       if [ "$1" = power ] && [ "$2" = 1 ] && [ "$delay" != 0 ]; then
         ( sleep "$delay"; printf 1 > "$d/power" ) </dev/null >/dev/null 2>&1 &
       else
         printf '%s' "$2" > "$d/$1"
       fi
       shift 2
     done ;;
esac
`

const simSecret = "Sim-secret1"

// simBMC is an ipmi_sim BMC at addr:623 inside a namespace, behind a relay
// that logs the address every datagram came from: ipmi_sim itself does
// not say who sent a command.
type simBMC struct {
	addr string
	port int // where the driver sends: 623 behind the relay
	hw   string
	mu   sync.Mutex
	from map[string]int // source address → datagrams
}

func (b *simBMC) params() url.Values {
	return url.Values{"power_type": {"ipmi"}, "power_parameters_power_address": {net.JoinHostPort(b.addr, strconv.Itoa(b.port))},
		"power_parameters_power_user": {"admin"}, "power_parameters_power_pass": {simSecret}}
}

func (b *simBMC) calls() string {
	s, _ := os.ReadFile(filepath.Join(b.hw, "calls"))
	return string(s)
}

func (b *simBMC) sources() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for k, v := range b.from {
		out[k] = v
	}
	return out
}

func hostIP(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %v: %v: %s", args, err, out)
	}
}

// startBMC runs ipmi_sim on loopback inside ns and the relay on addr:623;
// without ns, ipmi_sim itself listens on addr (a loopback address) at a
// port of its own.
func startBMC(t testing.TB, ns *tnetns.NS, addr string, delay int) *simBMC {
	t.Helper()
	dir := t.TempDir()
	b := &simBMC{addr: addr, port: 623, hw: filepath.Join(dir, "hw"), from: map[string]int{}}
	state := filepath.Join(dir, "state")
	for _, d := range []string{b.hw, state} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	simAddr, port := "127.0.0.1", 20000+int(net.ParseIP(addr).To4()[3])
	if ns != nil {
		ns.Ip("addr", "add", addr+"/25", "dev", "br0")
	} else {
		pc, err := net.ListenPacket("udp4", addr+":0")
		if err != nil {
			t.Fatal(err)
		}
		simAddr, port, b.port = addr, pc.LocalAddr().(*net.UDPAddr).Port, pc.LocalAddr().(*net.UDPAddr).Port
		pc.Close()
	}
	lan := fmt.Sprintf(`name "bmc"
set_working_mc 0x20
  startlan 1
    addr %s %d
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
  chassis_control "%s %s %d"
  user 2 true "admin" "%s" admin 10 none md2 md5 straight
`, simAddr, port, filepath.Join(dir, "chassis.sh"), b.hw, delay, simSecret)
	emu := "mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\nmc_enable 0x20\n"
	for name, body := range map[string]string{"lan.conf": lan, "sim.emu": emu, "chassis.sh": simChassis} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	args := []string{"ipmi_sim", "-c", filepath.Join(dir, "lan.conf"), "-f", filepath.Join(dir, "sim.emu"), "-n", "-s", state}
	if ns != nil {
		args = append([]string{"ip", "netns", "exec", ns.Name}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("ipmi_sim %s:\n%s\ncalls:\n%s", addr, out.String(), b.calls())
		}
	})
	// Up when it answers an RMCP ping, as a rack's probe sends.
	ready := func() bool {
		probe := func() error {
			return rack.Probe(context.Background(), "ipmi://"+net.JoinHostPort(simAddr, strconv.Itoa(port)))
		}
		if ns != nil {
			return ns.Do(probe) == nil
		}
		return probe() == nil
	}
	for deadline := time.Now().Add(10 * time.Second); !ready(); {
		if time.Now().After(deadline) {
			t.Fatalf("ipmi_sim on %s does not answer:\n%s", addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ns == nil {
		return b
	}
	var front net.PacketConn
	if err := ns.Do(func() (err error) { front, err = net.ListenPacket("udp4", addr+":623"); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close() })
	upstream := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	ns.Go(func() { b.relay(front, upstream) })
	return b
}

// relay forwards datagrams to ipmi_sim, one upstream socket per client
// (opened on this goroutine's thread, in the namespace), and logs who
// sent them.
func (b *simBMC) relay(front net.PacketConn, upstream *net.UDPAddr) {
	ups := map[string]*net.UDPConn{}
	buf := make([]byte, 2048)
	for {
		n, from, err := front.ReadFrom(buf)
		if err != nil {
			return
		}
		key := from.String()
		up, ok := ups[key]
		if !ok {
			if up, err = net.DialUDP("udp4", nil, upstream); err != nil {
				continue
			}
			ups[key] = up
			go func(up *net.UDPConn, to net.Addr) {
				rb := make([]byte, 2048)
				for {
					n, err := up.Read(rb)
					if err != nil {
						return
					}
					_, _ = front.WriteTo(rb[:n], to)
				}
			}(up, from)
		}
		b.mu.Lock()
		b.from[from.(*net.UDPAddr).IP.String()]++
		b.mu.Unlock()
		_, _ = up.Write(buf[:n])
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
	bmcsA := []*simBMC{startBMC(t, netA, "192.0.2.10", 2), startBMC(t, netA, "192.0.2.11", 2), startBMC(t, netA, "192.0.2.12", 2)}
	bmcB := startBMC(t, netB, "192.0.2.140", 0)

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
	add := func(name string, b *simBMC, addr string) string {
		t.Helper()
		machines++
		form := url.Values{"hostname": {name}, "architecture": {"amd64/generic"}, "mac_addresses": {fmt.Sprintf("52:54:00:77:00:%02x", machines)}}
		if b != nil {
			for k, v := range b.params() {
				form[k] = v
			}
		} else {
			form.Set("power_type", "ipmi")
			form.Set("power_parameters_power_address", addr+":623")
			form.Set("power_parameters_power_user", "admin")
			form.Set("power_parameters_power_pass", simSecret)
		}
		m, err := cl.CreateMachine(ctx, form)
		if err != nil {
			t.Fatal(err)
		}
		return m.SystemID
	}
	var idsA []string
	for i, b := range bmcsA {
		idsA = append(idsA, add(fmt.Sprintf("a%d", i), b, b.addr))
	}
	idB := add("b0", bmcB, bmcB.addr)

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
			if !strings.Contains(b.calls(), "set power 1") {
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
		if n := strings.Count(b.calls(), "set power 1"); n != 1 {
			t.Errorf("BMC %s got %d power ons:\n%s", b.addr, n, b.calls())
		}
		src := b.sources()
		if src["192.0.2.2"] == 0 || src["192.0.2.3"] == 0 || len(src) != 2 {
			t.Errorf("BMC %s heard from %v; want the two racks of its network", b.addr, src)
		}
	}
	if src := bmcB.sources(); len(src) != 1 || src["192.0.2.130"] == 0 {
		t.Errorf("BMC %s heard from %v; want rack b only", bmcB.addr, src)
	}
	if n := strings.Count(bmcB.calls(), "set power 1"); n != 1 {
		t.Errorf("BMC %s got %d power ons", bmcB.addr, n)
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
