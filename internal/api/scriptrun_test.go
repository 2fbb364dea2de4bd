package api_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agent"
	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
)

type apiResult struct {
	ID          int64   `json:"id"`
	Name        string  `json:"name"`
	Status      int     `json:"status"`
	StatusName  string  `json:"status_name"`
	ExitStatus  *int    `json:"exit_status"`
	Runtime     string  `json:"runtime"`
	Device      *string `json:"physical_blockdevice"`
	Output      string  `json:"output"`
	Stdout      string  `json:"stdout"`
	Stderr      string  `json:"stderr"`
	Result      string  `json:"result"`
	ScriptID    *int64  `json:"script_id"`
	StartedText *string `json:"started"`
}

type apiSet struct {
	ID         int64       `json:"id"`
	Type       int         `json:"type"`
	StatusName string      `json:"status_name"`
	Results    []apiResult `json:"results"`
}

func dec(t *testing.T, s string) string {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (e *env) uploadScript(name, text string) {
	e.t.Helper()
	e.mustCLI(200, http.MethodPost, "scripts/", e.admin, cliBody(cliPart{name: "name", value: name}, cliPart{name: "script", file: name, value: text}))
}

// testingMachine is a Ready machine with a commissioning inventory (one
// disk, vda) in testing with the scripts named, and its environment's
// metadata client.
func (e *env) testingMachine(host, mac, scripts string) (string, *agentapi.Client) {
	e.t.Helper()
	id := e.readyMachine(host, mac)
	if _, err := e.srv.Store.UpdateMachine(context.Background(), id, func(m *machine.Machine) ([]machine.Event, error) {
		machine.ApplyInventory(m, *testInventory(mac))
		return nil, nil
	}); err != nil {
		e.t.Fatal(err)
	}
	e.must(200, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"test"}, "testing_scripts": {scripts}}, nil)
	r, err := e.agent("").Hello(e.t.Context(), agentapi.HelloRequest{Identity: ident("", mac), Purpose: "ephemeral", Enrol: e.enrol(id)})
	if err != nil || r.Action != agentapi.ActionProceed || r.Phase != agentapi.PhaseTesting {
		e.t.Fatalf("hello: %+v %v", r, err)
	}
	return id, e.agent(r.Token)
}

const (
	diskScript = `#!/bin/bash
# --- Start MAAS 1.0 script metadata ---
# name: disk-read
# script_type: testing
# hardware_type: storage
# parameters:
#   disk: {type: storage, argument_format: '{path}'}
# --- End MAAS 1.0 script metadata ---
echo "reading $1"
printf 'status: passed\nresults:\n  speed: 42\n' > "$RESULT_PATH"
`
	failScript = "#!/bin/sh\n# --- Start MAAS 1.0 script metadata ---\n# script_type: testing\n# --- End MAAS 1.0 script metadata ---\necho half-way\necho 'bad memory at 0x10' >&2\nexit 3\n"
	hangScript = "#!/bin/sh\n# --- Start MAAS 1.0 script metadata ---\n# script_type: testing\n# timeout: 2\n# --- End MAAS 1.0 script metadata ---\necho 'step 1 of 2'\nsleep 60\necho never\n"
)

// TestScriptsRunOnTheMachine runs uploaded testing scripts as the
// environment runs them (real processes, reported over the metadata API
// as they go) and reads them back through node-script-results: per disk,
// exit status, stdout, stderr, combined output, result YAML, runtime; a
// stuck script shows its output while it runs and is stopped at its
// timeout; a failed script ends the machine Failed testing, and
// override_failed_testing lets it be used.
func TestScriptsRunOnTheMachine(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.uploadScript("disk-read", diskScript)
		e.uploadScript("bad-memory", failScript)
		e.uploadScript("stuck", hangScript)
		id, env := e.testingMachine("tested", "52:54:00:5c:00:01", "disk-read,bad-memory,stuck")
		var m apiMachine
		task, err := env.Task(t.Context())
		if err != nil || len(task.Scripts) != 3 || task.Scripts[0].Name != "bad-memory" || task.Scripts[1].Instance != "vda" ||
			strings.Join(task.Scripts[1].Args, " ") != "/dev/vda" || task.Scripts[2].Timeout != 2 {
			t.Fatalf("task %+v %v", task.Scripts, err)
		}
		runner := &agent.ScriptRunner{Report: env.Report, Logf: t.Logf, Dir: t.TempDir(), Every: 100 * time.Millisecond}
		type ran struct {
			bad []string
			err error
		}
		done := make(chan ran, 1)
		go func() {
			bad, err := runner.Run(context.Background(), task.Scripts)
			done <- ran{bad, err}
		}()

		// While "stuck" sleeps, its first line is already readable.
		deadline := time.Now().Add(10 * time.Second)
		for {
			var set apiSet
			e.must(200, http.MethodGet, "nodes/"+id+"/results/current-testing/", e.user, url.Values{"include_output": {"1"}, "filters": {"stuck"}}, &set)
			if len(set.Results) == 1 && set.Results[0].StatusName == "Running" && strings.Contains(dec(t, set.Results[0].Output), "step 1 of 2") {
				if m = e.machine(id); m.StatusName != "Testing" {
					t.Fatalf("machine %s while running", m.StatusName)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the stuck script's output never showed while it ran: %+v", set)
			}
			time.Sleep(50 * time.Millisecond)
		}
		r := <-done
		if r.err != nil || strings.Join(r.bad, ",") != "bad-memory,stuck" {
			t.Fatalf("run: %v %v", r.bad, r.err)
		}
		if err := env.Signal(t.Context(), agentapi.StatusFailed, "2 script(s) did not pass: "+strings.Join(r.bad, ", "), nil); err != nil {
			t.Fatal(err)
		}
		e.waitStatus(id, "Failed testing")

		var sets []apiSet
		e.must(200, http.MethodGet, "nodes/"+id+"/results/", e.user, url.Values{"type": {"testing"}, "include_output": {"1"}}, &sets)
		if len(sets) != 1 || sets[0].StatusName != "Failed" || len(sets[0].Results) != 3 {
			t.Fatalf("sets %+v", sets)
		}
		got := map[string]apiResult{}
		for _, x := range sets[0].Results {
			got[x.Name] = x
		}
		disk, bad, stuck := got["disk-read"], got["bad-memory"], got["stuck"]
		if disk.StatusName != "Passed" || *disk.ExitStatus != 0 || disk.Device == nil || *disk.Device != "vda" ||
			dec(t, disk.Stdout) != "reading /dev/vda\n" || !strings.Contains(dec(t, disk.Result), "speed: 42") || disk.Runtime == "" || disk.ScriptID == nil {
			t.Fatalf("disk-read %+v", disk)
		}
		if bad.StatusName != "Failed" || *bad.ExitStatus != 3 || dec(t, bad.Stdout) != "half-way\n" || dec(t, bad.Stderr) != "bad memory at 0x10\n" ||
			len(dec(t, bad.Output)) != len("half-way\nbad memory at 0x10\n") || !strings.Contains(dec(t, bad.Output), "bad memory at 0x10\n") {
			t.Fatalf("bad-memory %+v", bad)
		}
		if stuck.StatusName != "Timed out" || strings.Contains(dec(t, stuck.Output), "never") || !strings.Contains(dec(t, stuck.Output), "timed out after 2s") {
			t.Fatalf("stuck %+v %q", stuck, dec(t, stuck.Output))
		}
		var fields map[string]any
		e.must(200, http.MethodGet, "machines/"+id+"/", e.user, nil, &fields)
		for k, want := range map[string]float64{"testing_status": 3, "storage_test_status": 2, "other_test_status": 3, "cpu_test_status": -1} {
			if fields[k] != want {
				t.Errorf("%s = %v, want %v", k, fields[k], want)
			}
		}
		if fields["testing_status_name"] != "Failed" || fields["storage_test_status_name"] != "Passed" {
			t.Errorf("names %v %v", fields["testing_status_name"], fields["storage_test_status_name"])
		}
		code, text := e.call(http.MethodGet, "nodes/"+id+"/results/current-testing/", e.user, url.Values{"op": {"download"}})
		if code != 200 || !strings.Contains(string(text), "bad memory at 0x10") || !strings.Contains(string(text), "disk-read - vda") {
			t.Fatalf("download %d %s", code, text)
		}
		// MAAS's older view: one entry per finished result, stderr apart.
		var older []struct {
			Name   string            `json:"name"`
			Exit   *int              `json:"script_result"`
			Type   int               `json:"result_type"`
			Node   map[string]string `json:"node"`
			Data   string            `json:"data"`
			Result string            `json:"resource_uri"`
		}
		e.must(200, http.MethodGet, "commissioning-results/", e.user, url.Values{"system_id": {id}, "result_type": {"2"}}, &older)
		byName := map[string]string{}
		for _, o := range older {
			if o.Node["system_id"] != id || o.Type != 2 || o.Exit == nil {
				t.Fatalf("commissioning-results entry %+v", o)
			}
			byName[o.Name] = dec(t, o.Data)
		}
		if len(older) != 5 || !strings.Contains(byName["stuck.err"], "timed out after 2s") || byName["disk-read"] != "reading /dev/vda\n" || byName["bad-memory"] != "half-way\n" ||
			byName["bad-memory.err"] != "bad memory at 0x10\n" || !strings.Contains(byName["stuck"], "step 1 of 2") {
			t.Fatalf("commissioning-results: %v", byName)
		}
		e.must(200, http.MethodGet, "installation-results/", e.user, url.Values{"name": {"bad-memory"}, "system_id": {id}}, &older)
		if len(older) != 2 {
			t.Fatalf("installation-results name=bad-memory: %+v", older)
		}
		e.answerSays(400, http.MethodGet, "commissioning-results/", e.user, url.Values{"result_type": {"x"}}, "integer")
		e.must(200, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"override_failed_testing"}}, &m)
		if m.StatusName != "Ready" {
			t.Fatalf("after override: %s", m.StatusName)
		}
	})
}

// TestScriptAbortAndRefusals aborts a machine while a script runs: the
// result reads Aborted and the environment's next report is refused, so
// it stops. Unknown scripts and scripts needing packages without a
// mirror are refused in words, leaving the machine as it was.
func TestScriptAbortAndRefusals(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.uploadScript("stuck", strings.Replace(hangScript, "# timeout: 2\n", "", 1))
		id, env := e.testingMachine("aborted", "52:54:00:5c:00:02", "stuck")
		task, err := env.Task(t.Context())
		if err != nil || len(task.Scripts) != 1 {
			t.Fatalf("task %+v %v", task, err)
		}
		runner := &agent.ScriptRunner{Report: env.Report, Logf: t.Logf, Dir: t.TempDir(), Every: 100 * time.Millisecond}
		done := make(chan error, 1)
		go func() {
			_, err := runner.Run(context.Background(), task.Scripts)
			done <- err
		}()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var set apiSet
			e.must(200, http.MethodGet, "nodes/"+id+"/results/current-testing/", e.user, nil, &set)
			if set.Results[0].StatusName == "Running" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("never running: %+v", set)
			}
			time.Sleep(50 * time.Millisecond)
		}
		e.must(200, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"abort"}}, nil)
		select {
		case err := <-done:
			if !errors.Is(err, agent.ErrStopped) {
				t.Fatalf("runner after abort: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the runner went on after the abort")
		}
		var set apiSet
		e.must(200, http.MethodGet, "nodes/"+id+"/results/current-testing/", e.user, nil, &set)
		if set.Results[0].StatusName != "Aborted" || e.machine(id).StatusName != "Ready" {
			t.Fatalf("after abort: %+v, %s", set, e.machine(id).StatusName)
		}

		// Refusals: nothing changes.
		e.uploadScript("needs-fio", "#!/bin/sh\n# --- Start MAAS 1.0 script metadata ---\n# script_type: testing\n# packages: {apt: fio}\n# --- End MAAS 1.0 script metadata ---\nfio\n")
		for scripts, want := range map[string]string{
			"nosuch":    `{"testing_scripts":["Unknown testing script or tag \"nosuch\"."]}`,
			"needs-fio": `needs packages (apt: [fio]), and Anvil has no package mirror to install them from`,
		} {
			code, b := e.call(http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"test"}, "testing_scripts": {scripts}})
			if code != 400 || !strings.Contains(string(b), want) {
				t.Errorf("%s: %d %s", scripts, code, b)
			}
		}
		var sets []apiSet
		e.must(200, http.MethodGet, "nodes/"+id+"/results/", e.user, nil, &sets)
		if len(sets) != 1 || e.machine(id).StatusName != "Ready" {
			t.Fatalf("a refused test left %d sets, machine %s", len(sets), e.machine(id).StatusName)
		}
		if code, b := e.call(http.MethodGet, "nodes/"+id+"/results/current-commissioning/", e.user, nil); code != 400 || string(b) != "No current commissioning script set exists for this node." {
			t.Fatalf("no commissioning set: %d %s", code, b)
		}
		if code, b := e.call(http.MethodGet, "nodes/nosuch/results/", e.user, nil); code != 404 || string(b) != "No Node matches the given query." {
			t.Fatalf("unknown node: %d %s", code, b)
		}
	})
}
