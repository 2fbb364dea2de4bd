package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/testutil/ephemeral"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
	"github.com/anvilmetal/anvil/internal/testutil/simbmc"
	"github.com/anvilmetal/anvil/internal/testutil/syncbuf"
)

// TestMultiSite: two regions (anvil serve) on one PostgreSQL database and
// two sites, each with its own provisioning network and a BMC network
// only its racks reach. Site A has two racks (one following each region,
// sharing its DHCP as primary and secondary), site B one (following
// region 2). It shows, in order:
//
//  1. region 1 is killed (SIGKILL) during a burst of power actions
//     issued through both regions: every action accepted completes, none
//     reaches a BMC twice, and the commands region 1's rack held are
//     taken over by site A's other rack once their lease runs out;
//  2. the rack holding site A's commands is killed while they are in
//     flight: the other site-A rack finishes them within the lease, and
//     site B's commands run on, from site B's rack only;
//  3. site B's only rack is killed: once the regions see it gone, its
//     machines' power requests are refused at once with the reason, and
//     nothing is sent to site B's BMCs from site A; restarted with its
//     data directory (its enrolled credential), it drains later requests;
//  4. meanwhile a QEMU machine in site A PXE boots and commissions with
//     one of site A's racks dead.
//
// Leases are short (--power-lease, --rack-live) so that it takes
// minutes; the failover times are logged.
func TestMultiSite(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a QEMU machine")
	}
	for _, bin := range []string{"qemu-system-x86_64", "ipmi_sim", "ipmitool"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (scripts/test.sh installs it)", bin)
		}
	}
	db := pgtest.URL(t)
	kernel, initrd := ephemeral.Build(t)
	start := time.Now()
	m := newMultisite(t, anvilBinary(t), db, kernel, initrd, "tapM0")
	m.startRegions()
	r1, r2 := m.regions[0], m.regions[1]
	adm := r2.api

	// Each site's provisioning subnet; site B's on a fabric of its own,
	// so that its VLAN has racks of its own.
	adm.api("POST", "subnets/", url.Values{"cidr": {provNetA}, "gateway_ip": {"192.0.2.1"}}, nil)
	adm.api("POST", "ipranges/", url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.119"}}, nil)
	var fabric struct {
		ID int `json:"id"`
	}
	adm.api("POST", "fabrics/", url.Values{"name": {"site-b"}}, &fabric)
	vlanB := fmt.Sprintf("fabrics/%d/vlans/0/", fabric.ID)
	adm.api("POST", "subnets/", url.Values{"cidr": {provNetB}, "gateway_ip": {"192.0.2.129"}, "fabric": {strconv.Itoa(fabric.ID)}}, nil)
	adm.api("POST", "ipranges/", url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.200"}, "end_ip": {"192.0.2.219"}}, nil)

	a1 := m.startRack("rack-a1", m.rackNet("a1", m.siteA, "198.18.0.11", "192.0.2.2", "198.51.100.2"), r1, "192.0.2.2", "198.51.100.2", bmcNetA)
	a2 := m.startRack("rack-a2", m.rackNet("a2", m.siteA, "198.18.0.12", "192.0.2.3", "198.51.100.3"), r2, "192.0.2.3", "198.51.100.3", bmcNetA)
	rb := m.startRack("rack-b", m.rackNet("b", m.siteB, "198.18.0.13", "192.0.2.130", "198.51.100.130"), r2, "192.0.2.130", "198.51.100.130", bmcNetB)
	racks := []*rackProc{a1, a2, rb}
	adm.waitFor("the three racks to enrol", 30*time.Second, func() bool {
		var rs []struct {
			SystemID string `json:"system_id"`
			Hostname string `json:"hostname"`
		}
		adm.api("GET", "rackcontrollers/", nil, &rs)
		for _, r := range racks {
			for _, got := range rs {
				if got.Hostname == r.name {
					r.sysID = got.SystemID
				}
			}
		}
		return a1.sysID != "" && a2.sysID != "" && rb.sysID != ""
	})
	for _, r := range racks {
		m.waitClaiming(r, 30*time.Second)
	}
	// Site A's racks share its DHCP; site B's serves its own alone.
	adm.api("PUT", "fabrics/0/vlans/0/", url.Values{"dhcp_on": {"true"}, "primary_rack": {a1.name}, "secondary_rack": {a2.name}}, nil)
	adm.api("PUT", vlanB, url.Values{"dhcp_on": {"true"}}, nil)

	bmcs := map[string]*simbmc.BMC{}
	var idsA, idsB []string
	for i, addr := range []string{"198.51.100.10", "198.51.100.11", "198.51.100.12", "198.51.100.140", "198.51.100.141"} {
		ns := m.siteA
		if i >= 3 {
			ns = m.siteB
		}
		b := simbmc.Start(t, simbmc.Config{NS: ns, Dev: "bmc", Addr: addr, Bits: 25, Delay: 2})
		form := b.Params()
		form.Set("hostname", fmt.Sprintf("power-%d", i))
		form.Set("architecture", "amd64/generic")
		form.Set("mac_addresses", fmt.Sprintf("52:54:00:77:00:%02x", i+1))
		var am apiMachine
		m.regions[i%2].api.api("POST", "machines/", form, &am)
		bmcs[am.SystemID] = b
		if i < 3 {
			idsA = append(idsA, am.SystemID)
		} else {
			idsB = append(idsB, am.SystemID)
		}
	}
	all := append(slices.Clone(idsA), idsB...)
	t.Logf("two regions, three racks and five BMCs up in %s", time.Since(start).Round(100*time.Millisecond))

	// 1. Region 1 dies during a burst of actions through both regions.
	const rounds = 6
	killed := make(chan struct{})
	var accepted atomic.Int32
	burst := make(chan error, len(all))
	var wg sync.WaitGroup
	for i, id := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range rounds {
				op := []string{"power_on", "power_off"}[k%2]
				if err := m.act(id, op, m.regions[(i+k)%2], killed); err != nil {
					burst <- err
					return
				}
				accepted.Add(1)
				if err := m.waitIdle(id, time.Minute); err != nil {
					burst <- err
					return
				}
			}
		}()
	}
	adm.waitFor("a third of the burst", time.Minute, func() bool { return int(accepted.Load()) >= len(all)*rounds/3 })
	// Region 1 dies while its rack (a1) holds commands in flight.
	var held []string
	adm.waitFor("rack-a1 to hold a command", 30*time.Second, func() bool {
		held = held[:0]
		for _, r := range m.requests(idsA...) {
			if r.State == "running" && owner(racks, r.Owner) == a1 {
				held = append(held, r.ID)
			}
		}
		return len(held) > 0
	})
	r1.kill()
	killedAt := time.Now()
	close(killed)
	adm.waitFor("rack-a2 to finish what rack-a1 held", 30*time.Second, func() bool { return !m.openRequests(held...) })
	n, claimedR, doneR := m.takenOver(held, a1, a2, killedAt)
	// It comes back on its data directory, mid-burst.
	m.startRegion(r1)
	r1Back := time.Now()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the burst did not end")
	}
	close(burst)
	for err := range burst {
		t.Error(err)
	}
	for _, id := range all {
		rs := m.requests(id)
		b := bmcs[id]
		if n := countState(rs, "done"); n != rounds || len(rs) != rounds {
			t.Errorf("%s: %d of %d actions done: %+v", id, n, len(rs), rs)
		}
		if on, sets := b.Count("set power 1"), countPrefix(b.Calls(), "set "); on != rounds/2 || sets != rounds || b.On() {
			t.Errorf("BMC %s got %d power ons and %d commands for %d actions (on at the end: %v):\n%s", b.Addr, on, sets, rounds, b.On(), b.Calls())
		}
	}
	m.checkSources(bmcs, idsA, a1, a2)
	m.checkSources(bmcs, idsB, rb)
	t.Logf("region 1 killed mid-burst (%d actions through both regions; its rack held %d, of which rack-a2 took over %d): claimed by rack-a2 %s after the kill, done %s after (lease %s)",
		len(all)*rounds, len(held), n, claimedR.Round(10*time.Millisecond), doneR.Round(10*time.Millisecond), powerLease)
	if claimedR > powerLease+2*time.Second {
		t.Errorf("the takeover took %s, lease %s", claimedR, powerLease)
	}
	if t.Failed() {
		t.FailNow()
	}

	// 2. The rack holding site A's commands dies with them in flight.
	for _, r := range []*rackProc{a1, a2} {
		m.waitClaiming(r, time.Minute)
	}
	t.Logf("rack-a1 claims again %s after region 1's restart", time.Since(r1Back).Round(100*time.Millisecond))
	ons := map[string]int{}
	for _, id := range all {
		ons[id] = bmcs[id].Count("set power 1")
	}
	step2 := time.Now()
	for i, id := range all {
		if err := m.act(id, "power_on", m.regions[i%2], nil); err != nil {
			t.Fatal(err)
		}
	}
	adm.waitFor("site A's power ons to reach the BMCs", 30*time.Second, func() bool {
		for _, id := range idsA {
			if bmcs[id].Count("set power 1") == ons[id] {
				return false
			}
		}
		return true
	})
	holds := map[*rackProc][]string{}
	for _, r := range m.requests(idsA...) {
		if r.State == "running" {
			if o := owner(racks, r.Owner); o != nil {
				holds[o] = append(holds[o], r.ID)
			}
		}
	}
	victim, survivor := a1, a2
	if len(holds[a2]) > len(holds[a1]) {
		victim, survivor = a2, a1
	}
	if len(holds[victim]) == 0 {
		t.Fatalf("no site-A rack holds a command in flight: %+v", m.requests(idsA...))
	}
	victim.p.kill()
	killedAt = time.Now()
	adm.waitFor("every power on to end", 30*time.Second, func() bool { return !m.open(all...) })
	n, claimedA, doneA := m.takenOver(holds[victim], victim, survivor, killedAt)
	for _, r := range m.requests(all...) {
		if r.Created.Before(step2) {
			continue
		}
		want := survivor
		if slices.Contains(idsB, r.SystemID) {
			want = rb
		}
		if r.State != "done" || (owner(racks, r.Owner) != want && !slices.Contains(holds[victim], r.ID)) {
			t.Errorf("power on %s of %s: %s by %q (%s), want done by %s", r.ID, r.SystemID, r.State, r.Owner, r.Error, want.name)
		}
	}
	for _, id := range all {
		if b := bmcs[id]; b.Count("set power 1") != ons[id]+1 || !b.On() {
			t.Errorf("BMC %s: %d power ons after one more action (on: %v):\n%s", b.Addr, b.Count("set power 1")-ons[id], b.On(), b.Calls())
		}
	}
	m.checkSources(bmcs, idsB, rb)
	t.Logf("%s killed holding %d power ons in flight: %s took over %d, claimed %s after the kill, done %s after (lease %s)",
		victim.name, len(holds[victim]), survivor.name, n, claimedA.Round(10*time.Millisecond), doneA.Round(10*time.Millisecond), powerLease)
	if claimedA > powerLease+2*time.Second {
		t.Errorf("the takeover took %s, lease %s", claimedA, powerLease)
	}
	if t.Failed() {
		t.FailNow()
	}

	// 4 starts: a QEMU machine in site A commissions with one of its racks
	// dead, while site B loses its rack.
	vmSite := &site{t: t, ns: m.siteA, cl: survivor.region.api.cl, log: &syncbuf.Buffer{}, bmcLAN: siteBits + " bmc"}
	vm := vmSite.machineAt("vm-a", "198.51.100.20", "02:00:00:00:00:20", "6f2c1f1e-0000-4000-8000-0000000005a1",
		[]string{"52:54:00:0f:00:a1"}, []string{"tapM0"}, 64)
	form := vmSite.ipmiParams(vm)
	form.Set("hostname", "vm-a")
	form.Set("mac_addresses", "52:54:00:0f:00:a1")
	form.Set("commission", "true")
	var vmM apiMachine
	vmSite.api("POST", "machines/", form, &vmM)
	commissionStart := time.Now()

	// 3. Site B's only rack dies.
	srcB := m.sourcesOf(bmcs, idsB)
	oldID, _ := m.rackSeen(rb)
	offs := map[string]int{}
	for _, id := range idsB {
		offs[id] = bmcs[id].Count("set power 0")
	}
	rb.p.kill()
	killedAt = time.Now()
	// Until the regions see it gone, a request is accepted and waits for
	// a rack (equal ones coalesced); then it is refused at once.
	var detected time.Duration
	early := false
	reason := "no rack reaches BMC " + bmcs[idsB[0]].Addr
	for {
		err := m.call(r2, idsB[0], "power_off")
		var ae *client.APIError
		if errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable && strings.Contains(ae.Body, reason) {
			detected = time.Since(killedAt)
			break
		}
		if err != nil {
			t.Fatalf("power off of %s after its rack died: %v", idsB[0], err)
		}
		early = true
		if time.Since(killedAt) > rackLiveness+10*time.Second {
			t.Fatalf("power requests for site B are still accepted %s after its rack died", time.Since(killedAt))
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(1200 * time.Millisecond) // each region reads the racks at most once a second
	for _, r := range m.regions {
		for _, id := range idsB {
			t0 := time.Now()
			err := m.call(r, id, "power_off")
			var ae *client.APIError
			if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || !strings.Contains(ae.Body, "no rack reaches BMC "+bmcs[id].Addr) {
				t.Errorf("power off of %s through %s with site B's rack dead: %v", id, r.name, err)
			}
			if d := time.Since(t0); d > time.Second {
				t.Errorf("the refusal through %s took %s", r.name, d)
			}
		}
	}
	if ev := adm.events(idsB[1]); !strings.Contains(ev, "no rack reaches BMC "+bmcs[idsB[1]].Addr) {
		t.Errorf("no event says why %s's power off was refused:\n%s", idsB[1], ev)
	}
	if got := m.sourcesOf(bmcs, idsB); !maps.Equal(got, srcB) {
		t.Errorf("site B's BMCs heard from %v with their rack dead (before: %v)", got, srcB)
	}
	for _, r := range []*rackProc{a1, a2} {
		for _, id := range idsB {
			if strings.Contains(r.out.String(), bmcs[id].Addr) {
				t.Errorf("%s's log names site B's BMC %s", r.name, bmcs[id].Addr)
			}
		}
	}
	t.Logf("rack-b killed: its machines' requests refused (%q) %s after the kill (rack liveness %s); accepted before that: %v",
		reason, detected.Round(10*time.Millisecond), rackLiveness, early)

	// It comes back on its data directory: enrolled already, no secret.
	m.runRack(rb)
	backAt := time.Now()
	adm.waitFor("rack-b to claim again", 30*time.Second, func() bool {
		id, seen := m.rackSeen(rb)
		return id != oldID && time.Since(seen) < 2*time.Second
	})
	t.Logf("rack-b claims again %s after its restart", time.Since(backAt).Round(10*time.Millisecond))
	// Later requests drain through it, and so does one accepted before
	// the regions saw it gone: each BMC gets one power off.
	for i, id := range idsB {
		if i == 0 && early {
			continue
		}
		if err := m.act(id, "power_off", m.regions[i%2], nil); err != nil {
			t.Fatal(err)
		}
	}
	adm.waitFor("site B's power offs to drain", 30*time.Second, func() bool { return !m.open(idsB...) })
	for _, r := range m.requests(idsB...) {
		if r.Created.After(killedAt) && (r.State != "done" || !strings.HasPrefix(r.Owner, "rack:"+rb.sysID+".") || r.Owner == "rack:"+oldID) {
			t.Errorf("power %s %s of %s: %s by %q (%s), want done by the restarted rack-b", r.Action, r.ID, r.SystemID, r.State, r.Owner, r.Error)
		}
	}
	for _, id := range idsB {
		if b := bmcs[id]; b.Count("set power 0") != offs[id]+1 || b.On() {
			t.Errorf("BMC %s: %d power offs after the rack's return (on: %v):\n%s", b.Addr, b.Count("set power 0")-offs[id], b.On(), b.Calls())
		}
	}
	m.checkSources(bmcs, idsB, rb)
	var rs []struct {
		SystemID string `json:"system_id"`
		Hostname string `json:"hostname"`
	}
	adm.api("GET", "rackcontrollers/", nil, &rs)
	for _, r := range rs {
		if r.Hostname == rb.name && r.SystemID != rb.sysID {
			t.Errorf("rack-b came back as %s, not %s", r.SystemID, rb.sysID)
		}
	}
	if len(rs) != 3 {
		t.Errorf("%d racks after rack-b's return: %+v", len(rs), rs)
	}

	// 4 ends: the QEMU machine is commissioned and off.
	vmSite.waitStatus(vmM.SystemID, "Ready", 5*time.Minute, vm)
	vmSite.waitFor("vm-a to be off", 2*time.Minute, func() bool { return !vm.Running() })
	// Its DHCP, boot files and BMC commands came from the live rack, its
	// address from that rack's half of the range; its environment
	// reached the region through the site's router.
	ev := vmSite.events(vmM.SystemID)
	share := map[*rackProc]string{a1: `192\.0\.2\.10[0-9]`, a2: `192\.0\.2\.11[0-9]`}[survivor]
	if !regexp.MustCompile(`ack `+share+`, boot file http://`+regexp.QuoteMeta(survivor.provIP)+`:5248/ipxe.cfg`).MatchString(ev) ||
		!strings.Contains(ev, "The ephemeral environment checked in") {
		t.Errorf("vm-a's boot was not %s's:\n%s", survivor.name, ev)
	}
	for _, r := range m.requests(vmM.SystemID) {
		if owner(racks, r.Owner) != survivor {
			t.Errorf("vm-a's power %s ran on %q, not %s", r.Action, r.Owner, survivor.name)
		}
	}
	t.Logf("vm-a PXE booted and commissioned through %s with %s dead: %s from its creation to Ready and off",
		survivor.name, victim.name, time.Since(commissionStart).Round(100*time.Millisecond))
	t.Logf("whole test: %s", time.Since(start).Round(time.Second))
}

// takenOver checks that the requests dead held when it died (at killed)
// ended done: by dead itself if it finished before, else by heir on its
// second attempt. It returns how many heir took over, and when after the
// kill the last was claimed by heir and when it was done.
func (m *multisite) takenOver(ids []string, dead, heir *rackProc, killed time.Time) (n int, claimed, done time.Duration) {
	m.t.Helper()
	racks := []*rackProc{dead, heir}
	for _, r := range m.requestsByID(ids...) {
		switch by := owner(racks, r.Owner); {
		case r.State == "done" && by == dead && r.Finished.Before(killed):
		case r.State == "done" && by == heir && r.Attempts == 2:
			n++
			claimed, done = max(claimed, r.Started.Sub(killed)), max(done, r.Finished.Sub(killed))
		default:
			m.t.Errorf("request %s (%s of %s) held by %s when it died: %s by %q after %d attempts (%s); want done by %s on attempt 2",
				r.ID, r.Action, r.SystemID, dead.name, r.State, r.Owner, r.Attempts, r.Error, heir.name)
		}
	}
	return n, claimed, done
}

// call asks region r for op on machine id.
func (m *multisite) call(r *regionProc, id, op string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := r.api.cl.Do(ctx, http.MethodPost, "machines/"+id+"/", url.Values{"op": {op}}, url.Values{})
	return err
}

// act asks region r for op on machine id, as a client that knows which
// regions are up does: a region known dead is not asked, and when one
// dies mid-call (after killed is closed) the database says whether it
// stored the request before it died; if not, the other region is asked.
func (m *multisite) act(id, op string, r *regionProc, killed <-chan struct{}) error {
	if !r.up.Load() {
		r = m.live()
	}
	before, err := m.queryRequests(id)
	if err != nil {
		return err
	}
	err = m.call(r, id, op)
	var ae *client.APIError
	if err == nil {
		return nil
	}
	if errors.As(err, &ae) || killed == nil {
		return fmt.Errorf("%s %s through %s: %w", op, id, r.name, err)
	}
	select {
	case <-killed:
	case <-time.After(15 * time.Second):
		return fmt.Errorf("%s %s through %s: %w", op, id, r.name, err)
	}
	time.Sleep(time.Second) // a commit sent before the death lands
	after, err := m.queryRequests(id)
	if err != nil || len(after) > len(before) {
		return err
	}
	return m.act(id, op, m.live(), nil)
}

// waitIdle waits until none of the machine's actions is queued or running.
func (m *multisite) waitIdle(id string, d time.Duration) error {
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		rs, err := m.queryRequests(id)
		if err != nil {
			return err
		}
		if !anyOpen(rs) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: actions still open after %s: %+v", id, d, rs)
		}
	}
}

// waitClaiming waits until the rack's power worker asks for work.
func (m *multisite) waitClaiming(r *rackProc, d time.Duration) {
	m.t.Helper()
	m.regions[1].api.waitFor(r.name+" to claim power work", d, func() bool {
		_, seen := m.rackSeen(r)
		return time.Since(seen) < time.Second
	})
}

// sourcesOf merges the addresses the machines' BMCs heard from.
func (m *multisite) sourcesOf(bmcs map[string]*simbmc.BMC, ids []string) map[string]bool {
	out := map[string]bool{}
	for _, id := range ids {
		for a := range bmcs[id].Sources() {
			out[a] = true
		}
	}
	return out
}

// checkSources fails the test unless the machines' BMCs heard from the
// given racks only (each of them at least once).
func (m *multisite) checkSources(bmcs map[string]*simbmc.BMC, ids []string, racks ...*rackProc) {
	m.t.Helper()
	for _, id := range ids {
		src := bmcs[id].Sources()
		for a := range src {
			if !slices.ContainsFunc(racks, func(r *rackProc) bool { return r.bmcIP == a }) {
				m.t.Errorf("BMC %s heard from %s, which is none of its site's racks (%v)", bmcs[id].Addr, a, src)
			}
		}
	}
	heard := m.sourcesOf(bmcs, ids)
	for _, r := range racks {
		if !heard[r.bmcIP] {
			m.t.Errorf("no BMC of %v heard from %s (%s): %v", ids, r.name, r.bmcIP, heard)
		}
	}
}

func countState(rs []powerRow, state string) int {
	n := 0
	for _, r := range rs {
		if r.State == state {
			n++
		}
	}
	return n
}

func countPrefix(lines, prefix string) int {
	n := 0
	for _, l := range strings.Split(lines, "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}
