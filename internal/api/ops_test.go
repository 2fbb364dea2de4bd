package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/password"
	"github.com/anvilmetal/anvil/internal/store"
)

// deployedFor takes a machine to Deployed, allocated and deployed by the
// user with key, Anvil itself signalling the deployment's end.
func (e *env) deployedFor(id, key string) {
	e.t.Helper()
	e.ready(id)
	e.defaultImage()
	e.must(http.StatusOK, "POST", "machines/?op=allocate", key, url.Values{"system_id": {id}}, nil)
	e.must(http.StatusOK, "POST", "machines/"+id+"/?op=deploy", key, nil, nil)
	if _, _, err := e.srv.Service.Act(context.Background(), machine.SystemActor, id, machine.Input{Action: machine.Succeed}); err != nil {
		e.t.Fatal(err)
	}
	e.waitStatus(id, "Deployed")
}

// events returns "type: description" of a machine's events, newest first.
func (e *env) events(id string) []string {
	e.t.Helper()
	var evs struct {
		Events []struct {
			Type        string `json:"type"`
			Description string `json:"description"`
			Username    string `json:"username"`
		} `json:"events"`
	}
	e.must(http.StatusOK, "GET", "events/", e.admin, url.Values{"op": {"query"}, "id": {id}, "limit": {"100"}}, &evs)
	var out []string
	for _, ev := range evs.Events {
		out = append(out, ev.Type+": "+ev.Description+" ["+ev.Username+"]")
	}
	return out
}

type lockedMachine struct {
	Locked              bool              `json:"locked"`
	Status              string            `json:"status_name"`
	Description         string            `json:"description"`
	OwnerData           map[string]string `json:"owner_data"`
	WorkloadAnnotations map[string]string `json:"workload_annotations"`
}

func (e *env) lockState(id string) lockedMachine {
	e.t.Helper()
	var m lockedMachine
	e.must(http.StatusOK, "GET", "machines/"+id+"/", e.admin, nil, &m)
	return m
}

// TestMachineLock: `maas alice machine lock ID comment=...` locks alice's
// deployed machine; then every change anyone asks for (alice and an
// administrator, in the CLI's wire format) is refused with 403 in words
// and changes nothing, until it is unlocked.
func TestMachineLock(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		id := e.addMachine("locked-1", "52:54:00:10:00:01", nil).SystemID
		ready := e.addMachine("free-1", "52:54:00:10:00:02", nil).SystemID
		e.deployedFor(id, e.user)
		e.ready(ready)

		a := e.cli("POST", "machines/"+ready+"/?op=lock", e.admin, nil)
		if a.code != 409 || strings.TrimSpace(string(a.body)) != "Can't lock, node is not deployed or deploying" {
			t.Fatalf("lock a Ready machine: %d %s", a.code, a.body)
		}

		a = e.mustCLI(200, "POST", "machines/"+id+"/?op=lock", e.user, cliBody(cliPart{name: "comment", value: "production database"}))
		var m lockedMachine
		if err := json.Unmarshal(a.body, &m); err != nil || !m.Locked {
			t.Fatalf("lock answer: %v %s", err, a.body)
		}
		a = e.cli("POST", "machines/"+id+"/?op=lock", e.admin, nil)
		if a.code != 409 || strings.TrimSpace(string(a.body)) != "Machine is already locked" {
			t.Fatalf("lock twice: %d %s", a.code, a.body)
		}
		if evs := e.events(id); len(evs) == 0 || evs[0] != "Locked: Locked by alice: production database [alice]" {
			t.Fatalf("newest event %q, want who locked and why", evs)
		}

		type attempt struct {
			method, path string
			body         []byte
		}
		attempts := []attempt{
			{"POST", "?op=release", nil},
			{"POST", "?op=release", cliBody(cliPart{name: "erase", value: "true"})},
			{"POST", "?op=deploy", nil},
			{"POST", "?op=power_off", nil},
			{"POST", "?op=power_on", nil},
			{"POST", "?op=mark_broken", cliBody(cliPart{name: "comment", value: "disk"})},
			{"POST", "?op=abort", nil},
			{"POST", "?op=commission", nil},
			{"POST", "?op=test", nil},
			{"POST", "?op=rescue_mode", nil},
			{"POST", "?op=override_failed_testing", nil},
			{"POST", "?op=set_workload_annotations", cliBody(cliPart{name: "k", value: "v"})},
			{"POST", "?op=set_owner_data", cliBody(cliPart{name: "k", value: "v"})},
			{"PUT", "", cliBody(cliPart{name: "description", value: "changed"})},
			{"DELETE", "", nil},
		}
		for _, key := range []string{e.user, e.admin} {
			for _, at := range attempts {
				a := e.cli(at.method, "machines/"+id+"/"+at.path, key, at.body)
				if key == e.user && (at.path == "?op=commission" || at.path == "?op=test" || at.path == "?op=rescue_mode" ||
					at.path == "?op=override_failed_testing" || at.method == "DELETE") {
					if a.code != 403 {
						t.Errorf("alice %s %s: %d %s, want 403", at.method, at.path, a.code, a.body)
					}
					continue // administrators' actions: refused for alice anyway
				}
				if a.code != 403 || !strings.Contains(string(a.body), "locked") {
					t.Errorf("%s %s on a locked machine: %d %s, want 403 saying it is locked", at.method, at.path, a.code, a.body)
				}
			}
		}
		a = e.cli("POST", "machines/?op=release", e.admin, cliBody(cliPart{name: "machines", value: id}))
		if a.code != 403 || !strings.Contains(string(a.body), "locked: "+id) {
			t.Errorf("bulk release of a locked machine: %d %s", a.code, a.body)
		}
		if got := e.lockState(id); got.Status != "Deployed" || !got.Locked || got.Description != "" || len(got.OwnerData) != 0 {
			t.Fatalf("after refused changes: %+v", got)
		}
		if e.countMachines() != 2 {
			t.Fatal("a locked machine was deleted")
		}
		// Reading is not a change.
		e.mustCLI(200, "GET", "machines/"+id+"/", e.user, nil)
		e.mustCLI(200, "GET", "machines/"+id+"/?op=details", e.user, nil)

		a = e.mustCLI(200, "POST", "machines/"+id+"/?op=unlock", e.admin, cliBody(cliPart{name: "comment", value: "maintenance window"}))
		if err := json.Unmarshal(a.body, &m); err != nil || m.Locked {
			t.Fatalf("unlock answer: %v %s", err, a.body)
		}
		if evs := e.events(id); evs[0] != "Unlocked: Unlocked by admin: maintenance window [admin]" {
			t.Fatalf("newest event %q", evs[0])
		}
		a = e.cli("POST", "machines/"+id+"/?op=unlock", e.user, nil)
		if a.code != 409 || strings.TrimSpace(string(a.body)) != "Machine is not locked" {
			t.Fatalf("unlock twice: %d %s", a.code, a.body)
		}
		e.mustCLI(200, "POST", "machines/"+id+"/?op=release", e.user, nil)
	})
}

// A machine locked while it deploys still finishes: the lock stops
// people, not Anvil's own steps.
func TestLockWhileDeploying(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		id := e.addMachine("locked-2", "52:54:00:10:00:03", nil).SystemID
		e.ready(id)
		e.defaultImage()
		e.must(200, "POST", "machines/"+id+"/?op=deploy", e.user, nil, nil)
		e.mustCLI(200, "POST", "machines/"+id+"/?op=lock", e.user, nil)
		if a := e.cli("POST", "machines/"+id+"/?op=abort", e.user, nil); a.code != 403 {
			t.Fatalf("abort a locked deployment: %d %s", a.code, a.body)
		}
		if _, _, err := e.srv.Service.Act(t.Context(), machine.SystemActor, id, machine.Input{Action: machine.Succeed}); err != nil {
			t.Fatal(err)
		}
		if got := e.lockState(id); got.Status != "Deployed" || !got.Locked {
			t.Fatalf("after the deployment finished: %+v", got)
		}
	})
}

// TestWorkloadAnnotations: `maas alice machine set-workload-annotations ID
// k=v ...` (and set-owner-data) as the CLI sends them; an empty value
// removes a key; only the owner sets them; they go on release.
func TestWorkloadAnnotations(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		id := e.addMachine("annotated", "52:54:00:10:00:04", nil).SystemID
		e.ready(id)
		path := "machines/" + id + "/"
		a := e.cli("POST", path+"?op=set_workload_annotations", e.admin, cliBody(cliPart{name: "a", value: "1"}))
		if a.code != 409 || strings.TrimSpace(string(a.body)) != "Cannot set workload annotation: it hasn't been acquired." {
			t.Fatalf("annotate a free machine: %d %s", a.code, a.body)
		}
		e.must(200, "POST", "machines/?op=allocate", e.user, url.Values{"system_id": {id}}, nil)
		e.mustCLI(200, "POST", path+"?op=set_workload_annotations", e.user, cliBody(
			cliPart{name: "juju-model-uuid", value: "0b9f-4e"}, cliPart{name: "owner", value: "ünïcode team"}, cliPart{name: "drop", value: "x"}))
		a = e.mustCLI(200, "POST", path+"?op=set_owner_data", e.user, cliBody(cliPart{name: "drop", value: ""}))
		var m lockedMachine
		if err := json.Unmarshal(a.body, &m); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"juju-model-uuid": "0b9f-4e", "owner": "ünïcode team"}
		for _, got := range []map[string]string{m.OwnerData, m.WorkloadAnnotations, e.lockState(id).OwnerData} {
			if len(got) != len(want) || got["juju-model-uuid"] != want["juju-model-uuid"] || got["owner"] != want["owner"] {
				t.Fatalf("annotations %v, want %v", got, want)
			}
		}
		// Not even an administrator annotates someone else's machine.
		a = e.cli("POST", path+"?op=set_workload_annotations", e.admin, cliBody(cliPart{name: "a", value: "1"}))
		if a.code != 409 {
			t.Fatalf("admin annotates alice's machine: %d %s", a.code, a.body)
		}
		// Too large: a 400 naming the key, and nothing of the request kept.
		a = e.cli("POST", path+"?op=set_workload_annotations", e.user, cliBody(
			cliPart{name: "fine", value: "1"}, cliPart{name: "big", value: strings.Repeat("x", machine.MaxAnnotationValue+1)}))
		if a.code != 400 || !strings.Contains(string(a.body), `"big"`) {
			t.Fatalf("oversized value: %d %s", a.code, a.body)
		}
		if got := e.lockState(id).OwnerData; len(got) != 2 || got["fine"] != "" {
			t.Fatalf("after a refused request: %v", got)
		}
		e.must(200, "POST", path+"?op=release", e.user, nil, nil)
		e.waitStatus(id, "Ready")
		if got := e.lockState(id); len(got.OwnerData) != 0 || len(got.WorkloadAnnotations) != 0 {
			t.Fatalf("annotations survived the release: %+v", got)
		}
	})
}

// failedTesting tests a machine and has Anvil report the tests failed.
func (e *env) failedTesting(id string) {
	e.t.Helper()
	e.must(200, "POST", "machines/"+id+"/?op=test", e.admin, nil, nil)
	if _, _, err := e.srv.Service.Act(context.Background(), machine.SystemActor, id, machine.Input{Action: machine.Fail, Comment: "smartctl"}); err != nil {
		e.t.Fatal(err)
	}
	e.waitStatus(id, "Failed testing")
}

// TestOverrideFailedTesting: `maas admin machine override-failed-testing`
// puts a machine whose tests failed back to Ready, or Deployed when it was
// tested deployed; anything else is MAAS's 409.
func TestOverrideFailedTesting(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		free := e.addMachine("tested-free", "52:54:00:10:00:05", nil).SystemID
		used := e.addMachine("tested-used", "52:54:00:10:00:06", nil).SystemID
		e.ready(free)
		a := e.cli("POST", "machines/"+free+"/?op=override_failed_testing", e.admin, nil)
		if want := "Unable to override node status. Node is not in 'Failed testing' status."; a.code != 409 || strings.TrimSpace(string(a.body)) != want {
			t.Fatalf("override a Ready machine: %d %s", a.code, a.body)
		}
		e.failedTesting(free)
		if a := e.cli("POST", "machines/"+free+"/?op=override_failed_testing", e.user, nil); a.code != 403 {
			t.Fatalf("a user overrides: %d %s", a.code, a.body)
		}
		e.mustCLI(200, "POST", "machines/"+free+"/?op=override_failed_testing", e.admin, cliBody(cliPart{name: "comment", value: "known flaky disk"}))
		if got := e.machine(free); got.StatusName != "Ready" || got.Owner != nil {
			t.Fatalf("after override: %s owner %v", got.StatusName, got.Owner)
		}
		// Not necessarily the newest: the power command of the test
		// phase may report after it.
		if evs := e.events(free); !slices.ContainsFunc(evs, func(ev string) bool {
			return strings.Contains(ev, "Failed testing overridden by admin: known flaky disk")
		}) {
			t.Fatalf("no override event in %q", evs)
		}

		e.deployedFor(used, e.user)
		e.failedTesting(used)
		e.mustCLI(200, "POST", "machines/"+used+"/?op=override_failed_testing", e.admin, nil)
		if got := e.machine(used); got.StatusName != "Deployed" || got.Owner == nil || *got.Owner != "alice" {
			t.Fatalf("after override of a deployed machine: %s owner %v", got.StatusName, got.Owner)
		}
	})
}

// TestMachinesCollectionOps: list_allocated, accept_all, set_zone and
// power_parameters for many, as the maas CLI sends them.
func TestMachinesCollectionOps(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		ipmi := url.Values{"power_type": {"ipmi"}, "power_parameters_power_address": {"127.0.0.1:6231"},
			"power_parameters_power_user": {"root"}, "power_parameters_power_pass": {"bmc-s3cret"}}
		mine := e.addMachine("alloc-alice", "52:54:00:10:01:01", ipmi).SystemID
		admins := e.addMachine("alloc-admin", "52:54:00:10:01:02", nil).SystemID
		free := e.addMachine("free", "52:54:00:10:01:03", nil).SystemID
		deployed := e.addMachine("deployed-alice", "52:54:00:10:01:04", nil).SystemID
		for _, id := range []string{mine, admins, free} {
			e.ready(id)
		}
		e.deployedFor(deployed, e.user)
		e.must(200, "POST", "machines/?op=allocate", e.user, url.Values{"system_id": {mine}}, nil)
		e.must(200, "POST", "machines/?op=allocate", e.admin, url.Values{"system_id": {admins}}, nil)

		ids := func(b []byte) []string {
			var ms []apiMachine
			if err := json.Unmarshal(b, &ms); err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			var out []string
			for _, m := range ms {
				out = append(out, m.SystemID)
			}
			return out
		}
		if got := ids(e.mustCLI(200, "GET", "machines/?op=list_allocated", e.user, nil).body); len(got) != 1 || got[0] != mine {
			t.Fatalf("alice's list_allocated: %v, want only %s", got, mine)
		}
		if got := ids(e.mustCLI(200, "GET", "machines/?op=list_allocated", e.admin, nil).body); len(got) != 1 || got[0] != admins {
			t.Fatalf("admin's list_allocated: %v, want only %s", got, admins)
		}
		if got := ids(e.mustCLI(200, "GET", "machines/?op=list_allocated&id="+admins, e.user, nil).body); len(got) != 0 {
			t.Fatalf("alice's list_allocated of the admin's machine: %v", got)
		}

		// accept_all takes every held boot but a locked machine's.
		e.mustCLI(200, "POST", "machines/"+deployed+"/?op=lock", e.user, nil)
		for id, mac := range map[string]string{free: "52:54:00:10:02:03", deployed: "52:54:00:10:02:04"} {
			if err := e.srv.Store.HoldBoot(ctx, store.HeldBoot{SystemID: id, MACs: []string{mac}, BootMAC: mac, Source: "192.0.2.50", Reason: "no power-on asked for"}); err != nil {
				t.Fatal(err)
			}
		}
		// op=accept naming a locked machine accepts nothing.
		a := e.cli("POST", "machines/?op=accept", e.admin, cliBody(cliPart{name: "machines", value: free}, cliPart{name: "machines", value: deployed}))
		if a.code != 403 || !strings.Contains(string(a.body), "locked: "+deployed) {
			t.Fatalf("accept with a locked machine: %d %s", a.code, a.body)
		}
		if _, err := e.srv.Store.HeldBoot(ctx, free); err != nil {
			t.Fatalf("a refused accept took a boot: %v", err)
		}
		if got := ids(e.mustCLI(200, "POST", "machines/?op=accept_all", e.user, nil).body); len(got) != 0 {
			t.Fatalf("alice accepted %v", got)
		}
		if got := ids(e.mustCLI(200, "POST", "machines/?op=accept_all", e.admin, nil).body); len(got) != 1 || got[0] != free {
			t.Fatalf("accept_all accepted %v, want only %s", got, free)
		}
		if _, err := e.srv.Store.HeldBoot(ctx, deployed); err != nil {
			t.Fatalf("the locked machine's boot is no longer held: %v", err)
		}
		if m := e.machine(free); len(m.Interfaces) != 2 {
			t.Fatalf("accepted machine's interfaces: %+v", m.Interfaces)
		}

		// set_zone: all or nothing.
		e.must(200, "POST", "zones/", e.admin, url.Values{"name": {"rack2"}}, nil)
		zoneOf := func(id string) string { return e.machine(id).Zone.Name }
		refused := []struct {
			body []byte
			want string
		}{
			{cliBody(cliPart{name: "nodes", value: mine}), `{"zone":["This field is required."]}`},
			{cliBody(cliPart{name: "zone", value: "nosuch"}, cliPart{name: "nodes", value: mine}), `{"zone":["Select a valid choice. That choice is not one of the available choices."]}`},
			{cliBody(cliPart{name: "zone", value: "rack2"}), `{"system_id":["No node selected."]}`},
			{cliBody(cliPart{name: "zone", value: "rack2"}, cliPart{name: "nodes", value: mine}, cliPart{name: "nodes", value: "nosuch"}), `{"system_id":["Some of the given system ids are invalid system ids."]}`},
			{cliBody(cliPart{name: "zone", value: "rack2"}, cliPart{name: "nodes", value: mine}, cliPart{name: "nodes", value: deployed}), `{"system_id":["Some of the given system ids are invalid system ids."]}`},
		}
		for _, c := range refused {
			a := e.cli("POST", "machines/?op=set_zone", e.admin, c.body)
			if a.code != 400 || strings.TrimSpace(string(a.body)) != c.want {
				t.Errorf("set_zone: %d %s, want 400 %s", a.code, a.body, c.want)
			}
		}
		if zoneOf(mine) != "default" {
			t.Fatal("a refused set_zone moved a machine")
		}
		if a := e.cli("POST", "machines/?op=set_zone", e.user, cliBody(cliPart{name: "zone", value: "rack2"}, cliPart{name: "nodes", value: mine})); a.code != 403 {
			t.Fatalf("alice's set_zone: %d %s", a.code, a.body)
		}
		e.mustCLI(204, "POST", "machines/?op=set_zone", e.admin, cliBody(cliPart{name: "zone", value: "rack2"}, cliPart{name: "nodes", value: mine}, cliPart{name: "nodes", value: free}))
		if zoneOf(mine) != "rack2" || zoneOf(free) != "rack2" || zoneOf(admins) != "default" {
			t.Fatalf("zones after set_zone: %s %s %s", zoneOf(mine), zoneOf(free), zoneOf(admins))
		}

		// power_parameters for many: system_id → parameters, secrets
		// included, for administrators only.
		var params map[string]map[string]string
		a = e.mustCLI(200, "GET", "machines/?op=power_parameters&id="+mine+"&id="+free, e.admin, nil)
		if err := json.Unmarshal(a.body, &params); err != nil {
			t.Fatal(err)
		}
		if len(params) != 2 || params[mine]["power_pass"] != "bmc-s3cret" || params[mine]["power_user"] != "root" || params[free] == nil {
			t.Fatalf("power_parameters: %s", a.body)
		}
		if a := e.cli("GET", "machines/?op=power_parameters&id="+mine, e.user, nil); a.code != 403 || strings.Contains(string(a.body), "s3cret") {
			t.Fatalf("alice's power_parameters: %d %s", a.code, a.body)
		}
	})
}

// TestUsersCreate: `maas admin users create username=... email=...
// password=... is_superuser=0` as the CLI sends it; each missing
// parameter is MAAS's "No provided NAME!", and a refused request leaves
// no user behind.
func TestUsersCreate(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		full := []cliPart{{name: "username", value: "carol"}, {name: "email", value: "carol@example.com"},
			{name: "password", value: "carol's long secret"}, {name: "is_superuser", value: "0"}}
		for i, missing := range []string{"username", "email", "password", "is_superuser"} {
			parts := append(append([]cliPart(nil), full[:i]...), full[i+1:]...)
			a := e.cli("POST", "users/", e.admin, cliBody(parts...))
			if want := "No provided " + missing + "!"; a.code != 400 || strings.TrimSpace(string(a.body)) != want {
				t.Errorf("without %s: %d %s, want 400 %s", missing, a.code, a.body, want)
			}
		}
		bad := []struct {
			part  cliPart
			field string
		}{
			{cliPart{name: "username", value: "carol smith"}, "username"},
			{cliPart{name: "email", value: "carol@example.com\r\nBcc: x"}, "email"},
			{cliPart{name: "password", value: "short"}, "password"},
			{cliPart{name: "is_superuser", value: "maybe"}, "is_superuser"},
			{cliPart{name: "key", value: "ssh-rsa not-a-key"}, "key"},
		}
		for _, b := range bad {
			parts := []cliPart{}
			for _, p := range full {
				if p.name != b.part.name {
					parts = append(parts, p)
				}
			}
			parts = append(parts, b.part)
			if b.part.name == "key" {
				parts[3] = cliPart{name: "is_superuser", value: "1"}
			}
			a := e.cli("POST", "users/", e.admin, cliBody(parts...))
			if a.code != 400 || !strings.Contains(string(a.body), `"`+b.field+`"`) {
				t.Errorf("bad %s: %d %s, want 400 naming it", b.field, a.code, a.body)
			}
		}
		if _, err := e.srv.Store.GetUser(ctx, "carol"); err == nil {
			t.Fatal("a refused create left a user")
		}
		if a := e.cli("POST", "users/", e.user, cliBody(full...)); a.code != 403 {
			t.Fatalf("alice creates a user: %d %s", a.code, a.body)
		}

		var u struct {
			Username    string `json:"username"`
			Email       string `json:"email"`
			IsSuperuser bool   `json:"is_superuser"`
		}
		if err := json.Unmarshal(e.mustCLI(200, "POST", "users/", e.admin, cliBody(full...)).body, &u); err != nil {
			t.Fatal(err)
		}
		if u.Username != "carol" || u.Email != "carol@example.com" || u.IsSuperuser {
			t.Fatalf("created %+v", u)
		}
		_, hash, err := e.srv.Store.PasswordHash(ctx, "carol")
		if err != nil || password.Verify(hash, "carol's long secret") != nil {
			t.Fatalf("carol's password was not stored: %v", err)
		}
		// A second create of the name is refused and changes nothing.
		again := append(append([]cliPart(nil), full[:2]...), cliPart{name: "password", value: "another long one"}, cliPart{name: "is_superuser", value: "1"})
		if a := e.cli("POST", "users/", e.admin, cliBody(again...)); a.code != 409 {
			t.Fatalf("create carol twice: %d %s", a.code, a.body)
		}
		if got, hash, _ := e.srv.Store.PasswordHash(ctx, "carol"); got.Admin || password.Verify(hash, "carol's long secret") != nil {
			t.Fatal("a refused second create changed carol")
		}

		key := testKey(7, "dave@ops")
		e.mustCLI(200, "POST", "users/", e.admin, cliBody(cliPart{name: "username", value: "dave"}, cliPart{name: "email", value: ""},
			cliPart{name: "password", value: "dave's long secret"}, cliPart{name: "is_superuser", value: "1"}, cliPart{name: "key", value: key}))
		if ks, err := e.srv.Store.ListSSHKeys(ctx, "dave"); err != nil || len(ks) != 1 {
			t.Fatalf("dave's SSH keys: %v %v", ks, err)
		}
		if got, err := e.srv.Store.GetUser(ctx, "dave"); err != nil || !got.Admin {
			t.Fatalf("dave: %+v %v", got, err)
		}
	})
}

// TestGetToken: `maas admin machine get-token ID` names the machine's
// metadata token and never shows its secret; users are refused.
func TestGetToken(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		id := e.addMachine("tokened", "52:54:00:10:03:01", nil).SystemID
		if a := e.mustCLI(200, "GET", "machines/"+id+"/?op=get_token", e.admin, nil); strings.TrimSpace(string(a.body)) != "null" {
			t.Fatalf("no token yet: %s", a.body)
		}
		e.must(200, "POST", "machines/"+id+"/?op=commission", e.admin, nil, nil)
		tok, err := e.srv.Store.CreateMachineToken(t.Context(), id, machine.Commissioning)
		if err != nil {
			t.Fatal(err)
		}
		a := e.mustCLI(200, "GET", "machines/"+id+"/?op=get_token", e.admin, nil)
		var got map[string]any
		if err := json.Unmarshal(a.body, &got); err != nil {
			t.Fatal(err)
		}
		if got["token_key"] != tok.TokenKey || got["consumer_key"] != tok.ConsumerKey || got["token_secret"] != nil ||
			got["issued_for"] != "Commissioning" || strings.Contains(string(a.body), tok.Secret) {
			t.Fatalf("get_token: %s", a.body)
		}
		if a := e.cli("GET", "machines/"+id+"/?op=get_token", e.user, nil); a.code != 403 {
			t.Fatalf("alice's get_token: %d %s", a.code, a.body)
		}
		if a := e.cli("GET", "machines/nosuch/?op=get_token", e.admin, nil); a.code != 404 {
			t.Fatalf("get_token of no machine: %d %s", a.code, a.body)
		}
	})
}

// TestRestoreConfiguration: the three restores answer the machine in
// Ready or Failed testing, and refuse as MAAS does elsewhere, for users
// and on a locked machine.
func TestRestoreConfiguration(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		id := e.addMachine("restored", "52:54:00:10:04:01", nil).SystemID
		used := e.addMachine("restored-used", "52:54:00:10:04:02", nil).SystemID
		refusal := map[string]string{
			"restore_networking_configuration": "Machine must be in a ready or failed testing state to restore networking configuration",
			"restore_storage_configuration":    "Machine must be in a ready or failed testing state to restore storage configuration.",
			"restore_default_configuration":    "Machine must be in a ready or failed testing state to restore default networking and storage configuration.",
		}
		for op, want := range refusal {
			a := e.cli("POST", "machines/"+id+"/?op="+op, e.admin, nil)
			if a.code != 409 || strings.TrimSpace(string(a.body)) != want {
				t.Errorf("%s of a New machine: %d %s", op, a.code, a.body)
			}
		}
		e.ready(id)
		e.deployedFor(used, e.user)
		e.failedTesting(used)
		// Lock takes only deployed machines and a locked one is never
		// tested; lock this one in the store to check the guard anyway.
		if _, err := e.srv.Store.UpdateMachine(t.Context(), used, func(m *machine.Machine) ([]machine.Event, error) {
			m.Locked = true
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		for op := range refusal {
			var m apiMachine
			if err := json.Unmarshal(e.mustCLI(200, "POST", "machines/"+id+"/?op="+op, e.admin, nil).body, &m); err != nil || m.SystemID != id || m.StatusName != "Ready" {
				t.Errorf("%s of a Ready machine: %+v %v", op, m, err)
			}
			if a := e.cli("POST", "machines/"+id+"/?op="+op, e.user, nil); a.code != 403 {
				t.Errorf("%s by a user: %d %s", op, a.code, a.body)
			}
			if a := e.cli("POST", "machines/"+used+"/?op="+op, e.admin, nil); a.code != 403 || !strings.Contains(string(a.body), "locked") {
				t.Errorf("%s of a locked machine: %d %s", op, a.code, a.body)
			}
		}
	})
}
