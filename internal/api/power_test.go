package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/redfishbmc"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// chassis starts a lab Redfish service fronting n simulated systems.
func chassis(t *testing.T, n int, faults lab.Faults) (string, []*lab.SimMachine, *lab.Log) {
	t.Helper()
	log := &lab.Log{}
	var sims []*lab.SimMachine
	var systems []lab.Machine
	for i := 0; i < n; i++ {
		m := lab.NewSim(fmt.Sprintf("sys%d", i), fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprintf("52:54:00:77:00:%02x", i))
		sims, systems = append(sims, m), append(systems, m)
	}
	svc := redfishbmc.New(redfishbmc.Options{User: "admin", Password: "secret", Systems: systems, Faults: faults, Log: log})
	u, err := svc.Start("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return u, sims, log
}

// addRedfish adds a machine behind the service at u as system node.
func (e *env) addRedfish(host, mac, u, node string) apiMachine {
	return e.addMachine(host, mac, url.Values{
		"power_type":                     {"redfish"},
		"power_parameters_power_address": {u},
		"power_parameters_power_user":    {"admin"},
		"power_parameters_power_pass":    {"secret"},
		"power_parameters_node_id":       {node},
	})
}

// waitIdle waits until no power request is queued or running anywhere.
func (e *env) waitIdle(ids []string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, id := range ids {
		r, err := e.srv.Service.Power.Wait(ctx, id)
		if err != nil || (r.State != store.PowerDone && r.State != store.PowerFailed) {
			e.t.Fatalf("request %s: %+v %v", id, r, err)
		}
	}
}

// TestPowerSerialisedThroughAPI: many simultaneous API power requests for
// one machine and for several machines on one chassis BMC: the BMC saw one
// command at a time, and every request ran.
func TestPowerSerialisedThroughAPI(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		u, sims, log := chassis(t, 3, lab.Faults{Delay: 3 * time.Millisecond})
		var ms []apiMachine
		for i := range sims {
			ms = append(ms, e.addRedfish(fmt.Sprintf("blade%d", i), fmt.Sprintf("52:54:00:66:00:%02x", i), u, fmt.Sprintf("sys%d", i)))
		}
		var (
			mu  sync.Mutex
			ids = map[string]bool{}
			wg  sync.WaitGroup
		)
		for i := 0; i < 60; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				m := ms[i%len(ms)]
				if i%5 == 0 {
					m = ms[0] // one machine gets far more than its share
				}
				op := "power_on"
				if i%3 == 2 {
					op = "power_off"
				}
				req, _ := http.NewRequest("POST", e.base+"api/2.0/machines/"+m.SystemID+"/?op="+op, nil)
				req.Header.Set("Authorization", oauth(e.admin))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("%s: %d", op, resp.StatusCode)
					return
				}
				mu.Lock()
				ids[resp.Header.Get("X-Anvil-Power-Request")] = true
				mu.Unlock()
			}(i)
		}
		wg.Wait()
		var list []string
		for id := range ids {
			if id == "" {
				t.Fatal("a power request got no id")
			}
			list = append(list, id)
		}
		e.waitIdle(list)
		entries := log.Entries()
		if a, b, found := redfishbmc.Overlap(entries); found {
			t.Fatalf("commands overlapped on the chassis BMC: %+v and %+v", a, b)
		}
		resets := 0
		for _, en := range entries {
			if strings.HasPrefix(en.Command, "reset") {
				resets++
			}
		}
		if resets == 0 || len(list) < 2 {
			t.Fatalf("%d resets for %d requests", resets, len(list))
		}
		var q map[string]any
		e.must(200, "GET", "machines/"+ms[0].SystemID+"/?op=power_queue", e.admin, nil, &q)
		// The power monitor's own poll of the new machine may be queued
		// by now; none of the test's actions may.
		waiting := 0
		for _, w := range q["waiting"].([]any) {
			if w, _ := w.(map[string]any); w["reason"] != "power monitor" {
				waiting++
			}
		}
		if f, _ := q["in_flight"].(map[string]any); waiting != 0 || f != nil && f["reason"] != "power monitor" {
			t.Fatalf("queue not empty after all finished: %v", q)
		}
	})
}

// deployed takes a machine to Deployed through the API, with Anvil itself
// signalling the phases' ends as the ephemeral environment will.
func (e *env) deployed(id string) {
	e.t.Helper()
	e.ready(id)
	e.defaultImage()
	e.must(200, "POST", "machines/"+id+"/?op=deploy", e.admin, nil, nil)
	if _, _, err := e.srv.Service.Act(context.Background(), machine.SystemActor, id, machine.Input{Action: machine.Succeed}); err != nil {
		e.t.Fatal(err)
	}
	e.waitStatus(id, "Deployed")
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDriftEnforceWarnAndGuard: a deployed machine powered off behind
// Anvil's back is powered on again under enforce, left off and flagged
// under warn, and the flap guard stops enforcing after 3 corrections.
func TestDriftEnforceWarnAndGuard(t *testing.T) {
	const interval = 400 * time.Millisecond
	eachDB(t, func(t *testing.T, e *env) {
		u, sims, _ := chassis(t, 2, lab.Faults{})
		a := e.addRedfish("drift-a", "52:54:00:55:00:01", u, "sys0")
		b := e.addRedfish("drift-b", "52:54:00:55:00:02", u, "sys1")
		e.deployed(a.SystemID)
		e.deployed(b.SystemID)
		waitFor(t, "both machines on", 5*time.Second, func() bool { return sims[0].IsOn() && sims[1].IsOn() })
		e.waitQueueIdle(a.SystemID)
		e.waitQueueIdle(b.SystemID)
		// On a loaded machine the polls can catch the power-off that ends
		// commissioning before the deploy's power-on lands, and correct it;
		// start counting from a settled machine with a fresh guard.
		waitFor(t, "the monitor to see both on", 20*time.Second, func() bool {
			return e.machine(a.SystemID).Observed == "on" && e.machine(b.SystemID).Observed == "on"
		})
		e.must(200, "PUT", "machines/"+a.SystemID+"/", e.admin, url.Values{"drift_policy": {"enforce"}}, nil)

		// enforce (the default for deployed machines)
		for i := 1; i <= 3; i++ {
			sims[0].Fail()
			if !waitUntil(10*interval+5*time.Second, sims[0].IsOn) {
				dumpEvents(t, e, a.SystemID)
				t.Fatalf("correction %d did not happen", i)
			}
			// Let the correction finish verifying before the next power
			// loss, or the loss lands inside its verification.
			e.waitQueueIdle(a.SystemID)
		}
		// The fourth drift within the hour trips the guard.
		sims[0].Fail()
		waitFor(t, "guard to trip", 20*time.Second, func() bool { return hasEvent(e, a.SystemID, "after 3 corrections") })
		time.Sleep(4 * interval)
		if sims[0].IsOn() || !e.machine(a.SystemID).PowerDriftFlag() {
			t.Fatal("the flap guard did not stop the fourth correction, or the drift is not flagged")
		}

		// warn
		e.must(200, "PUT", "machines/"+b.SystemID+"/", e.admin, url.Values{"drift_policy": {"warn"}}, nil)
		sims[1].Fail()
		waitFor(t, "drift flagged under warn", 10*time.Second, func() bool { return e.machine(b.SystemID).PowerDriftFlag() })
		time.Sleep(4 * interval)
		if sims[1].IsOn() {
			t.Fatal("warn powered the machine on")
		}
		// Re-arming enforce corrects it.
		e.must(200, "PUT", "machines/"+a.SystemID+"/", e.admin, url.Values{"drift_policy": {"enforce"}}, nil)
		waitFor(t, "enforce again after reset", 10*time.Second, sims[0].IsOn)
	}, withPowerMonitor(interval, 300*time.Millisecond))
}

// TestDeadAndSlowBMCs: in a fleet of healthy BMCs, one that never answers
// and one that answers slowly do not delay the others' polls.
func TestDeadAndSlowBMCs(t *testing.T) {
	const interval = time.Second
	e := start(t, "", withPowerMonitor(interval, time.Millisecond))
	type bmc struct {
		log *lab.Log
		id  string
	}
	var healthy []bmc
	for i := 0; i < 12; i++ {
		faults := lab.Faults{}
		switch i {
		case 0:
			faults.Hang = true
		case 1:
			faults.Delay = 800 * time.Millisecond
		}
		u, _, log := chassis(t, 1, faults)
		m := e.addRedfish(fmt.Sprintf("fleet%d", i), fmt.Sprintf("52:54:00:44:00:%02x", i), u, "sys0")
		if i > 1 {
			healthy = append(healthy, bmc{log, m.SystemID})
		}
	}
	time.Sleep(4*interval + 500*time.Millisecond)
	for _, h := range healthy {
		polls := 0
		for _, en := range h.log.Entries() {
			if en.Command == "status" {
				polls++
			}
		}
		// Four intervals: every healthy machine was polled at least three
		// times (its first slot may fall late in the first interval).
		if polls < 3 {
			t.Errorf("machine %s was polled %d times in 4 intervals", h.id, polls)
		}
	}
}

func hasEvent(e *env, id, word string) bool {
	var evs struct {
		Events []struct{ Type, Description string } `json:"events"`
	}
	e.must(200, "GET", "events/?op=query", e.admin, url.Values{"id": {id}, "limit": {"200"}}, &evs)
	for _, ev := range evs.Events {
		if strings.Contains(strings.ToLower(ev.Type+" "+ev.Description), word) {
			return true
		}
	}
	return false
}

// waitQueueIdle waits until nothing runs or waits in a machine's power
// queue.
func (e *env) waitQueueIdle(id string) {
	e.t.Helper()
	waitFor(e.t, "the power queue of "+id+" to drain", 20*time.Second, func() bool {
		var q map[string]any
		e.must(200, "GET", "machines/"+id+"/?op=power_queue", e.admin, nil, &q)
		w, _ := q["waiting"].([]any)
		return q["in_flight"] == nil && len(w) == 0
	})
}

func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func dumpEvents(t *testing.T, e *env, id string) {
	var evs struct {
		Events []struct{ Type, Description, Level, Created string } `json:"events"`
	}
	e.must(200, "GET", "events/?op=query", e.admin, url.Values{"id": {id}, "limit": {"200"}}, &evs)
	for i := len(evs.Events) - 1; i >= 0; i-- {
		ev := evs.Events[i]
		t.Logf("%s %s %s: %s", ev.Created, ev.Level, ev.Type, ev.Description)
	}
}

// TestDriftFailsManagedPhase: a machine that loses power while Anvil
// drives a phase (here Commissioning) fails the phase with the reason,
// whatever the drift policy.
func TestDriftFailsManagedPhase(t *testing.T) {
	const interval = 400 * time.Millisecond
	e := start(t, "", withPowerMonitor(interval, time.Millisecond))
	u, sims, _ := chassis(t, 1, lab.Faults{})
	m := e.addRedfish("phase", "52:54:00:33:00:01", u, "sys0")
	e.must(200, "POST", "machines/"+m.SystemID+"/?op=commission", e.admin, nil, nil)
	waitFor(t, "the machine to be powered on for commissioning", 5*time.Second, sims[0].IsOn)
	e.waitQueueIdle(m.SystemID) // the power-on has been verified
	sims[0].Fail()
	got := e.waitStatusWithin(m.SystemID, "Failed commissioning", 20*time.Second)
	if !strings.Contains(got.StatusMsg, "power drift") {
		t.Fatalf("status message %q does not give the drift as the reason", got.StatusMsg)
	}
	if sims[0].IsOn() {
		t.Fatal("Anvil corrected power during a phase instead of failing it")
	}
}
