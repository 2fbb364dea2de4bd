package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// An anonymous enlistment cannot store more than a machine reports: an
// oversized field is refused naming it, an oversized body is refused, and
// nothing is stored either way.
func TestEnlistmentIsBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		inv := testInventory("52:54:00:ee:00:01")
		inv.Disks[0].Model = strings.Repeat("m", 300)
		_, err := e.agent("").Enlist(ctx, agentapi.EnlistRequest{Identity: ident("", "52:54:00:ee:00:01"), Inventory: inv})
		if !isStatus(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "disks[0].model") {
			t.Errorf("a 300-byte disk model: %v, want 400 naming disks[0].model", err)
		}
		// About 0.9 MB of serials within the count limits.
		inv = testInventory("52:54:00:ee:00:02")
		for i := 0; i < 1000; i++ {
			inv.Disks = append(inv.Disks, inv.Disks[0])
			inv.Disks[i].Serial = strings.Repeat("s", 250)
			inv.Disks[i].Model = strings.Repeat("m", 250)
			inv.Disks[i].Name = fmt.Sprintf("sd%d", i)
		}
		_, err = e.agent("").Enlist(ctx, agentapi.EnlistRequest{Identity: ident("", "52:54:00:ee:00:02"), Inventory: inv})
		if !isStatus(err, http.StatusBadRequest) {
			t.Errorf("a 0.5 MB enlistment: %v, want 400", err)
		}
		if n := e.countMachines(); n != 0 {
			t.Errorf("%d machines stored from refused enlistments", n)
		}
	})
}

// One source address enlists a bounded number of times an hour.
func TestEnlistmentsPerSourceAreBounded(t *testing.T) {
	e := start(t, "")
	ctx := t.Context()
	var last error
	ok := 0
	for i := 0; i < 11; i++ {
		mac := fmt.Sprintf("52:54:00:ee:01:%02x", i)
		_, last = e.agent("").Enlist(ctx, agentapi.EnlistRequest{Identity: ident("", mac), Inventory: testInventory(mac)})
		if last == nil {
			ok++
		}
	}
	if ok != 10 || !isStatus(last, http.StatusTooManyRequests) {
		t.Errorf("%d of 11 enlistments from one address accepted, the last: %v; want 10 and a 429", ok, last)
	}
	if n := e.countMachines(); n != 10 {
		t.Errorf("%d machines", n)
	}
}

// A signal's raw files are bounded one by one.
func TestSignalFilesAreBounded(t *testing.T) {
	e := start(t, "")
	ctx := t.Context()
	_, token := e.commissioning("files", "52:54:00:ee:02:01")
	err := e.agent(token).Signal(ctx, agentapi.StatusWorking, "", map[string][]byte{"lshw": make([]byte, 5<<20)})
	if !isStatus(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "lshw") {
		t.Errorf("a 5 MiB result file: %v, want 400 naming it", err)
	}
	if err := e.agent(token).Signal(ctx, agentapi.StatusWorking, "", map[string][]byte{"lshw": make([]byte, 1<<20)}); err != nil {
		t.Errorf("a 1 MiB result file: %v", err)
	}
}

// commissioning adds a machine, starts commissioning it and answers its
// environment's hello as its own boot would, returning the machine and
// the environment's token.
func (e *env) commissioning(host, mac string) (apiMachine, string) {
	e.t.Helper()
	m := e.addMachine(host, mac, nil)
	e.must(http.StatusOK, http.MethodPost, "machines/"+m.SystemID+"/", e.admin, url.Values{"op": {"commission"}}, nil)
	e.waitStatus(m.SystemID, "Commissioning")
	r, err := e.agent("").Hello(e.t.Context(), agentapi.HelloRequest{Identity: ident("", mac), Purpose: "ephemeral", Enrol: e.enrol(m.SystemID)})
	if err != nil || r.Action != agentapi.ActionProceed {
		e.t.Fatalf("hello: %+v %v", r, err)
	}
	return m, r.Token
}
