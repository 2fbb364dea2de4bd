package cli_test

// End-to-end tests: the CLI, driven through its exported entry points as a
// user would, against a real Anvil server started in-process, on SQLite
// and (when ANVIL_TEST_POSTGRES is set) PostgreSQL.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/cli"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// e2e is a running server and a profiles file for the CLI.
type e2e struct {
	t      *testing.T
	srv    *serve.Server
	url    string // what the user types at login: http://127.0.0.1:port
	key    string // the admin's API key
	config string // the profiles file, passed with --config
}

// eachDB runs fn against a fresh server on SQLite and, when available,
// PostgreSQL.
func eachDB(t *testing.T, fn func(t *testing.T, e *e2e)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, startE2E(t, "")) })
	t.Run("postgres", func(t *testing.T) { fn(t, startE2E(t, pgtest.URL(t))) })
}

func startE2E(t *testing.T, dbURL string) *e2e { return startE2EWith(t, dbURL, nil) }

// startE2EWith is startE2E with opt, when not nil, changing the config.
func startE2EWith(t *testing.T, dbURL string, opt func(*serve.Config)) *e2e {
	t.Helper()
	dataDir := t.TempDir()
	ctx := context.Background()
	cfg := serve.Config{
		DataDir: dataDir, DBURL: dbURL, Listen: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if opt != nil {
		opt(&cfg)
	}
	srv, err := serve.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Logf("close server: %v", err)
		}
	})
	key, err := serve.APIKey(ctx, dataDir, dbURL, "admin")
	if err != nil {
		t.Fatal(err)
	}
	return &e2e{
		t: t, srv: srv, url: "http://" + srv.Addr.String(), key: key,
		config: filepath.Join(t.TempDir(), "profiles.json"),
	}
}

// run executes the CLI with the test's profiles file and fails the test if
// the API key, or any part of it, shows in the output.
func (e *e2e) run(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	return e.runContext(context.Background(), nil, nil, args...)
}

// runContext is run with a context and, optionally, the writers to use.
func (e *e2e) runContext(ctx context.Context, stdout, stderr io.Writer, args ...string) (string, string, int) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	if stdout == nil {
		stdout, stderr = &out, &errOut
	}
	code := cli.ExecuteContext(ctx, append(args, "--config", e.config), stdout, stderr)
	var all strings.Builder
	for _, w := range []io.Writer{stdout, stderr} {
		if s, ok := w.(interface{ String() string }); ok {
			all.WriteString(s.String())
		}
	}
	e.noKey(strings.Join(args, " "), all.String())
	return out.String(), errOut.String(), code
}

// noKey fails the test if s shows the API key or any of its three parts.
func (e *e2e) noKey(what, s string) {
	e.t.Helper()
	for _, part := range append(strings.Split(e.key, ":"), e.key) {
		if part != "" && strings.Contains(s, part) {
			e.t.Errorf("anvil %s printed (part of) the API key %q:\n%s", what, part, s)
		}
	}
}

// ok runs the CLI and fails the test unless it exits 0 with nothing on stderr.
func (e *e2e) ok(args ...string) string {
	e.t.Helper()
	out, errOut, code := e.run(args...)
	if code != 0 || errOut != "" {
		e.t.Fatalf("anvil %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// fails runs the CLI and fails the test unless it exits 1 with an error
// message on stderr containing every one of want, and nothing on stdout.
func (e *e2e) fails(args []string, want ...string) string {
	e.t.Helper()
	out, errOut, code := e.run(args...)
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "error: ") {
		e.t.Fatalf("anvil %s: exit %d, stdout %q, stderr %q; want exit 1 and an error", strings.Join(args, " "), code, out, errOut)
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			e.t.Errorf("anvil %s: stderr %q lacks %q", strings.Join(args, " "), errOut, w)
		}
	}
	return errOut
}

func (e *e2e) login() {
	e.t.Helper()
	out := e.ok("login", "lab", e.url, e.key)
	if want := "Logged in to " + e.url + "/MAAS/ as admin; saved profile lab (default).\n"; out != want {
		e.t.Fatalf("login printed %q, want %q", out, want)
	}
}

// showJSON returns the machine as `machine show --json` prints it.
func (e *e2e) showJSON(ref string) cliMachine {
	e.t.Helper()
	var m cliMachine
	out := e.ok("machine", "show", ref, "--json")
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		e.t.Fatalf("machine show %s --json: %v\n%s", ref, err, out)
	}
	return m
}

// waitStatus polls `machine show` until the machine reaches status.
func (e *e2e) waitStatus(ref, status string) cliMachine {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := e.showJSON(ref)
		if m.StatusName == status {
			return m
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("machine %s is %s (%s), want %s", ref, m.StatusName, m.StatusMessage, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEvent polls `events` until its table has a line containing every
// one of want.
func (e *e2e) waitEvent(want ...string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := e.ok("events", "--limit", "1000")
		if line := lineWith(out, want...); line != "" {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no event line with %q in:\n%s", want, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// act takes a system action, as the ephemeral environment's signals will.
func (e *e2e) act(id string, a machine.Action) {
	e.t.Helper()
	if _, _, err := e.srv.Service.Act(context.Background(), machine.SystemActor, id, machine.Input{Action: a}); err != nil {
		e.t.Fatalf("%s %s: %v", a, id, err)
	}
}

type cliMachine struct {
	SystemID      string  `json:"system_id"`
	Hostname      string  `json:"hostname"`
	StatusName    string  `json:"status_name"`
	StatusMessage string  `json:"status_message"`
	PowerState    string  `json:"power_state"`
	PowerType     string  `json:"power_type"`
	Owner         *string `json:"owner"`
	Architecture  string  `json:"architecture"`
	Interfaces    []struct {
		MAC string `json:"mac_address"`
	} `json:"interface_set"`
}

// lineWith returns the first line of s that contains all of want, or "".
func lineWith(s string, want ...string) string {
next:
	for _, line := range strings.Split(s, "\n") {
		for _, w := range want {
			if !strings.Contains(line, w) {
				continue next
			}
		}
		return line
	}
	return ""
}

// listJSON returns what `machines list --json` prints for the filters.
func (e *e2e) listJSON(filters ...string) []cliMachine {
	e.t.Helper()
	out := e.ok(append([]string{"machines", "list", "--json"}, filters...)...)
	var ms []cliMachine
	if err := json.Unmarshal([]byte(out), &ms); err != nil {
		e.t.Fatalf("machines list --json %s: %v\n%s", filters, err, out)
	}
	return ms
}

func hostnames(ms []cliMachine) []string {
	var hs []string
	for _, m := range ms {
		hs = append(hs, m.Hostname)
	}
	return hs
}

func TestE2ELogin(t *testing.T) {
	eachDB(t, func(t *testing.T, e *e2e) {
		// A key the server does not know: refused, clearly, and not saved.
		parts := strings.Split(e.key, ":")
		wrong := parts[0] + ":" + parts[1] + ":not" + parts[2]
		out, errOut, code := e.run("login", "lab", e.url, wrong)
		e.noKey("login (wrong key)", out+errOut)
		if strings.Contains(out+errOut, "not"+parts[2]) {
			t.Errorf("login printed the wrong key:\n%s%s", out, errOut)
		}
		if code != 1 || out != "" || !strings.HasPrefix(errOut, "error: checking the key with "+e.url+"/MAAS/: ") ||
			!strings.Contains(errOut, "401 Unauthorized: Authorization Error: Invalid access token\n") {
			t.Errorf("wrong key: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		if _, err := os.Stat(e.config); !os.IsNotExist(err) {
			t.Errorf("a refused login wrote the profiles file (stat: %v)", err)
		}
		// A malformed key never reaches the server, and is not echoed.
		e.fails([]string{"login", "lab", e.url, "just-a-secret-value"}, "malformed API key")

		// Commands before any login say what to do.
		e.fails([]string{"machines", "list"}, "anvil login")

		e.login()
		st, err := os.Stat(e.config)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("profiles file: %v, %v; want mode 0600", err, st)
		}
		// The URL may be typed in any of its usual forms.
		if out := e.ok("login", "other", e.url+"/MAAS/api/2.0/", e.key); out !=
			"Logged in to "+e.url+"/MAAS/ as admin; saved profile other.\n" {
			t.Errorf("second login printed %q", out)
		}
		if out := e.ok("machines", "list", "--profile", "other"); !strings.HasPrefix(out, "HOSTNAME") {
			t.Errorf("list with --profile other printed %q", out)
		}
		e.ok("logout", "other")
		e.fails([]string{"machines", "list", "--profile", "other"}, `no profile "other"`)

		// $ANVIL_CONFIG selects the profiles file when --config does not.
		t.Setenv("ANVIL_CONFIG", e.config)
		var stdout, stderr bytes.Buffer
		if code := cli.Execute([]string{"machines", "list"}, &stdout, &stderr); code != 0 ||
			!strings.HasPrefix(stdout.String(), "HOSTNAME") {
			t.Errorf("with $ANVIL_CONFIG: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
		}
	})
}

func TestE2EMachineLifecycle(t *testing.T) {
	eachDB(t, func(t *testing.T, e *e2e) {
		e.login()
		const (
			host1, mac1 = "e2e-one", "52:54:00:e2:e0:01"
			host2, mac2 = "e2e-two", "52:54:00:e2:e0:02"
		)

		// Enlist two machines.
		out := e.ok("machine", "add", "--hostname", host1, "--mac", mac1, "--arch", "amd64/generic", "--json")
		var m1 cliMachine
		if err := json.Unmarshal([]byte(out), &m1); err != nil || m1.SystemID == "" || m1.Hostname != host1 {
			t.Fatalf("machine add --json: %v\n%s", err, out)
		}
		id := m1.SystemID
		out = e.ok("machine", "add", "--hostname", host2, "--mac", mac2, "--arch", "amd64", "--power-type", "manual")
		m := regexp.MustCompile(`^` + host2 + ` \(([a-z0-9]+)\): New, power unknown\n$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("machine add printed %q", out)
		}
		id2 := m[1]

		// The list shows both, as a table and as the server's JSON.
		out = e.ok("machines", "list")
		if !strings.HasPrefix(out, "HOSTNAME ") || lineWith(out, host1, id, "New", "amd64/generic") == "" ||
			lineWith(out, host2, id2, "New") == "" {
			t.Errorf("machines list:\n%s", out)
		}
		if ms := e.listJSON(); len(ms) != 2 {
			t.Errorf("machines list --json: %d machines, want 2: %+v", len(ms), ms)
		}
		// Filters.
		for _, tc := range []struct {
			filter []string
			want   string
		}{
			{[]string{"--hostname", host1}, host1},
			{[]string{"--hostname", host1 + "," + host2}, host1 + "," + host2},
			{[]string{"--mac", mac2}, host2},
			{[]string{"--mac", mac1, "--mac", mac2}, host1 + "," + host2},
			{[]string{"--status", "new"}, host1 + "," + host2},
			{[]string{"--status", "ready"}, ""},
			{[]string{"--hostname", "nosuch"}, ""},
		} {
			ms := e.listJSON(tc.filter...)
			if got := strings.Join(slices.Sorted(slices.Values(hostnames(ms))), ","); got != tc.want {
				t.Errorf("machines list %s: %q, want %q", tc.filter, got, tc.want)
			}
		}
		if out := e.ok("machines", "list", "--json", "--status", "ready"); out != "[]\n" {
			t.Errorf("an empty list printed %q", out)
		}
		if out := e.ok("machines", "list", "--status", "ready"); strings.Count(out, "\n") != 1 {
			t.Errorf("an empty table printed %q", out)
		}

		// Show, by system id and by hostname: the same machine.
		byID := e.ok("machine", "show", id)
		byName := e.ok("machine", "show", host1)
		if byID != byName {
			t.Errorf("show by id and by hostname differ:\n%s\n---\n%s", byID, byName)
		}
		for _, want := range []string{
			"Hostname:       " + host1 + "\n",
			"System ID:      " + id + "\n",
			"Status:         New\n",
			"Power:          unknown (manual)\n",
			"Architecture:   amd64/generic\n",
		} {
			if !strings.Contains(byID, want) {
				t.Errorf("machine show lacks %q:\n%s", want, byID)
			}
		}
		if !strings.Contains(byID, "Interfaces:\n  NAME") || lineWith(byID, mac1, "yes") == "" {
			t.Errorf("machine show: no boot interface with %s:\n%s", mac1, byID)
		}

		// A New machine cannot be deployed; the error says why.
		errOut := e.fails([]string{"machine", "deploy", id}, "deploy "+id, "status New")
		if !strings.Contains(errOut, "409") {
			t.Errorf("deploy of a New machine: %q; want a 409", errOut)
		}
		// Nor marked fixed.
		e.fails([]string{"machine", "mark-fixed", host1}, "status New")

		// Commission, abort, commission again; the environment's "done"
		// makes the machine Ready.
		if out := e.ok("machine", "commission", id); !strings.HasPrefix(out, host1+" ("+id+"): Commissioning, power ") {
			t.Errorf("commission printed %q", out)
		}
		if out := e.ok("machine", "abort", host1, "--comment", "wrong disk"); !strings.HasPrefix(out, host1+" ("+id+"): New, power ") {
			t.Errorf("abort printed %q", out)
		}
		e.fails([]string{"machine", "abort", id}, "nothing in progress")
		e.ok("machine", "commission", host1)
		e.act(id, machine.Succeed)
		if got := e.showJSON(id); got.StatusName != "Ready" {
			t.Fatalf("after commissioning succeeded: %s", got.StatusName)
		}
		if ms := e.listJSON("--status", "ready"); len(ms) != 1 || ms[0].SystemID != id {
			t.Errorf("machines list --status ready: %+v", ms)
		}

		// The operator's path to Ready: broken, then fixed.
		if out := e.ok("machine", "mark-broken", id2, "--comment", "fan noise"); out != host2+" ("+id2+"): Broken, power unknown: Marked broken by admin: fan noise\n" {
			t.Errorf("mark-broken printed %q", out)
		}
		if got := e.showJSON(host2); got.StatusName != "Broken" || !strings.Contains(got.StatusMessage, "fan noise") {
			t.Errorf("after mark-broken: %s (%s)", got.StatusName, got.StatusMessage)
		}
		if out := e.ok("machine", "mark-fixed", host2); out != host2+" ("+id2+"): Ready, power unknown: Marked fixed by admin\n" {
			t.Errorf("mark-fixed printed %q", out)
		}

		// Allocate, deploy, the environment reports success, release.
		if out := e.ok("machine", "allocate", host1); !strings.HasPrefix(out, host1+" ("+id+"): Allocated, power ") {
			t.Errorf("allocate printed %q", out)
		}
		if got := e.showJSON(id); got.Owner == nil || *got.Owner != "admin" {
			t.Errorf("allocated machine's owner: %v", got.Owner)
		}
		e.fails([]string{"machine", "allocate", id}, "409")
		// No image is uploaded: the deploy is refused in words.
		e.fails([]string{"machine", "deploy", id}, "no image the default ubuntu/noble (none was named) is uploaded for amd64")
		if _, err := e.srv.Store.CreateBootResource(context.Background(), store.BootResource{Name: "ubuntu/noble", Architecture: "amd64/generic"},
			store.BootResourceFile{Filename: "ddraw", Filetype: "ddraw", SHA256: strings.Repeat("ab", 32), Size: 1, Complete: true}); err != nil {
			t.Fatal(err)
		}
		if out := e.ok("machine", "deploy", id, "--osystem", "ubuntu", "--distro-series", "noble"); !strings.HasPrefix(out, host1+" ("+id+"): Deploying, power ") {
			t.Errorf("deploy printed %q", out)
		}
		e.act(id, machine.Succeed)
		if out := e.ok("machines", "list", "--hostname", host1); lineWith(out, host1, "Deployed", "admin") == "" {
			t.Errorf("deployed machine in the list:\n%s", out)
		}
		if out := e.ok("machine", "show", host1); !strings.Contains(out, "OS:             ubuntu/noble\n") {
			t.Errorf("deployed machine's OS:\n%s", out)
		}
		out = e.ok("machine", "release", host1, "--comment", "done with it")
		if !strings.HasPrefix(out, host1+" ("+id+"): Releasing, power ") && !strings.HasPrefix(out, host1+" ("+id+"): Ready, power ") {
			t.Errorf("release printed %q", out)
		}
		// Releasing ends when the manual power-off completes.
		if got := e.waitStatus(host1, "Ready"); got.Owner != nil {
			t.Errorf("released machine still owned by %q", *got.Owner)
		}

		// Power: manual power cannot be queried, so the state is unknown,
		// and the line says what the operator must do.
		for op, want := range map[string]string{"power-on": "power it on now", "power-off": "power it off now", "power-state": "power it off now"} {
			if out := e.ok("machine", op, id); !strings.HasPrefix(out, host1+" ("+id+"): Ready, power unknown: ") ||
				!strings.HasSuffix(out, want+": Anvil cannot power this machine (power type manual)\n") {
				t.Errorf("%s printed %q", op, out)
			}
		}
		var js map[string]any
		if out := e.ok("machine", "power-state", host2, "--json"); json.Unmarshal([]byte(out), &js) != nil ||
			js["system_id"] != id2 || js["power_state"] != "unknown" {
			t.Errorf("power-state --json printed %q", out)
		}

		// The event log tells the story, oldest first.
		// Power commands run in the background; the manual driver's
		// "done" lands once the power-on has gone through.
		e.waitEvent(host1, "Power on", "Power on done")
		out = e.ok("events", "--limit", "1000")
		if !strings.HasPrefix(out, "TIME ") {
			t.Errorf("events table header: %q", out)
		}
		for _, want := range [][]string{
			{host1, "Commissioning", "Commissioning started by admin"},
			{host1, "Aborted", "wrong disk"},
			{host1, "Ready", "Commissioning finished"},
			{host2, "Marked broken", "fan noise"},
			{host2, "Marked fixed"},
			{host1, "Allocated", "Allocated to admin"},
			{host1, "Deploying", "ubuntu/noble"},
			{host1, "Deployed"},
			{host1, "Releasing", "done with it"},
			{host1, "Released"},
			{host1, "Powering on", "Power on requested by admin"},
			{host1, "Powering off", "Power off requested by admin"},
		} {
			if lineWith(out, want...) == "" {
				t.Errorf("events lacks a line with %q:\n%s", want, out)
			}
		}
		order := []string{"Commissioning started", "Aborted", "Commissioning finished", "Allocated to", "Deploying ubuntu", "Releasing", "Power on requested"}
		last := -1
		for _, s := range order {
			i := strings.Index(out, s)
			if i < last {
				t.Errorf("events not oldest first: %q before the line before it:\n%s", s, out)
			}
			last = i
		}
		// Filters reach the server.
		out = e.ok("events", "--hostname", host2)
		if lineWith(out, host1) != "" || lineWith(out, host2, "Marked broken") == "" {
			t.Errorf("events --hostname %s:\n%s", host2, out)
		}
		out = e.ok("events", "--id", id2, "--json")
		var page struct {
			Events []struct {
				Hostname string `json:"hostname"`
				Node     string `json:"node"`
			} `json:"events"`
		}
		if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Events) == 0 {
			t.Errorf("events --json: %v\n%s", err, out)
		}
		for _, ev := range page.Events {
			if ev.Node != id2 || ev.Hostname != host2 {
				t.Errorf("events --id %s returned an event of %s (%s)", id2, ev.Node, ev.Hostname)
			}
		}

		// Unknown machines.
		for _, args := range [][]string{
			{"machine", "show", "nosuch"},
			{"machine", "commission", "nosuch"},
			{"machine", "allocate", "nosuch"},
			{"machine", "power-state", "nosuch"},
			{"machine", "delete", "nosuch"},
		} {
			e.fails(args, `no machine has system id or hostname "nosuch"`)
		}
		// References that would name the collection instead of a machine
		// (machines//, machines/./) are not machines either; unchecked,
		// show tried to decode the list and release became the bulk release.
		for _, ref := range []string{"", ".", ".."} {
			for _, op := range []string{"show", "release", "mark-broken", "power-state", "allocate", "delete"} {
				e.fails([]string{"machine", op, ref}, `no machine has system id or hostname "`+ref+`"`)
			}
		}

		// Delete, by system id and by hostname.
		if out := e.ok("machine", "delete", id); out != "Deleted "+id+".\n" {
			t.Errorf("delete printed %q", out)
		}
		if out := e.ok("machine", "delete", host2); out != "Deleted "+host2+" ("+id2+").\n" {
			t.Errorf("delete by hostname printed %q", out)
		}
		e.fails([]string{"machine", "show", id}, "no machine")
		if out := e.ok("machines", "list", "--json"); out != "[]\n" {
			t.Errorf("after deleting everything, list printed %q", out)
		}
	})
}

func TestE2EEventsFollow(t *testing.T) {
	eachDB(t, func(t *testing.T, e *e2e) {
		e.login()
		out := e.ok("machine", "add", "--hostname", "tail-one", "--mac", "52:54:00:e2:e1:01", "--arch", "amd64/generic", "--json")
		var m cliMachine
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		e.ok("machine", "mark-broken", m.SystemID, "--comment", "before following")
		e.waitEvent("tail-one", "before following")

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var stdout, stderr syncBuffer
		done := make(chan int, 1)
		go func() {
			_, _, code := e.runContext(ctx, &stdout, &stderr, "events", "--follow")
			done <- code
		}()
		stdout.waitFor(t, "before following")

		// Actions taken now stream in, in order.
		e.ok("machine", "mark-fixed", "tail-one", "--comment", "while following")
		stdout.waitFor(t, "while following")
		e.ok("machine", "commission", "tail-one")
		stdout.waitFor(t, "Commissioning started by admin")
		e.act(m.SystemID, machine.Succeed)
		stdout.waitFor(t, "Commissioning finished")

		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("events --follow: exit %d after cancel, stderr %q", code, stderr.String())
			}
		case <-time.After(5 * time.Second):
			t.Fatal("events --follow did not end when its context was cancelled")
		}
		got := stdout.String()
		if stderr.String() != "" {
			t.Errorf("events --follow wrote to stderr: %q", stderr.String())
		}
		// Each event shows once, in order, below the history.
		for _, s := range []string{"before following", "while following", "Commissioning started", "Commissioning finished"} {
			if n := strings.Count(got, s); n != 1 {
				t.Errorf("%q appears %d times:\n%s", s, n, got)
			}
		}
		if !(strings.Index(got, "before following") < strings.Index(got, "while following") &&
			strings.Index(got, "while following") < strings.Index(got, "Commissioning started") &&
			strings.Index(got, "Commissioning started") < strings.Index(got, "Commissioning finished")) {
			t.Errorf("events out of order:\n%s", got)
		}
		if lineWith(got, "tail-one", "INFO", "Marked fixed", "while following", "admin") == "" {
			t.Errorf("streamed row:\n%s", got)
		}

		// A filtered follow with --json: one event per line, only the
		// machine asked for.
		e.ok("machine", "add", "--hostname", "tail-two", "--mac", "52:54:00:e2:e1:02", "--arch", "amd64/generic")
		e.ok("machine", "mark-broken", "tail-two", "--comment", "tail-two history")
		ctx, cancel = context.WithCancel(context.Background())
		defer cancel()
		var jout, jerr syncBuffer
		go func() {
			_, _, code := e.runContext(ctx, &jout, &jerr, "events", "-f", "--json", "--hostname", "tail-two")
			done <- code
		}()
		// Once the history is printed, later events can only come through
		// the stream.
		jout.waitFor(t, "tail-two history")
		e.ok("machine", "mark-broken", "tail-one", "--comment", "not for tail-two")
		e.ok("machine", "mark-fixed", "tail-two", "--comment", "tail-two streamed")
		jout.waitFor(t, "tail-two streamed")
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("events -f --json: exit %d, stderr %q", code, jerr.String())
		}
		for _, line := range strings.Split(strings.TrimSpace(jout.String()), "\n") {
			var ev map[string]any
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Errorf("not a JSON line: %q", line)
				continue
			}
			if ev["hostname"] != "tail-two" {
				t.Errorf("filtered follow printed an event of %v: %s", ev["hostname"], line)
			}
		}
	})
}

// syncBuffer is a buffer a running command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q in:\n%s", want, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestE2EMore(t *testing.T) {
	eachDB(t, func(t *testing.T, e *e2e) {
		// Login through Run with the caller's own root, reading the key from
		// standard input so it stays out of the shell history.
		root := &cobra.Command{Use: "anvil", SilenceUsage: true, SilenceErrors: true}
		root.AddCommand(cli.Commands()...)
		root.SetIn(strings.NewReader(e.key + "\n"))
		var stdout, stderr bytes.Buffer
		code := cli.Run(context.Background(), root, []string{"login", "lab", e.url, "-", "--config", e.config}, &stdout, &stderr)
		e.noKey("login -", stdout.String()+stderr.String())
		if code != 0 || stdout.String() != "Logged in to "+e.url+"/MAAS/ as admin; saved profile lab (default).\n" {
			t.Fatalf("login with the key on stdin: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
		}

		// The server picks a hostname when none is given; it then works as
		// a reference, as does the FQDN.
		var picked cliMachine
		if err := json.Unmarshal([]byte(e.ok("machine", "add", "--mac", "52:54:00:e2:e2:01", "--json")), &picked); err != nil || picked.Hostname == "" {
			t.Fatalf("machine add without a hostname: %v %+v", err, picked)
		}
		for _, ref := range []string{picked.Hostname, picked.Hostname + ".maas"} {
			if out := e.ok("machine", "show", ref); !strings.Contains(out, "System ID:      "+picked.SystemID+"\n") {
				t.Errorf("machine show %s:\n%s", ref, out)
			}
		}
		// The server's refusals come through with its reasons.
		e.fails([]string{"machine", "add", "--hostname", picked.Hostname, "--mac", "52:54:00:e2:e2:02"},
			"create machine", "hostname "+picked.Hostname+" is already in use by "+picked.Hostname+" ("+picked.SystemID+")")
		e.fails([]string{"machine", "add", "--hostname", "fresh", "--mac", "52:54:00:e2:e2:01"},
			"52:54:00:e2:e2:01 is already in use by "+picked.Hostname+" ("+picked.SystemID+")")
		e.fails([]string{"machine", "add", "--hostname", "bad_name!", "--mac", "52:54:00:e2:e2:03"}, "400 Bad Request", "bad_name!")
		e.fails([]string{"machines", "list", "--status", "bogus"}, "400 Bad Request", "bogus")
		e.fails([]string{"events", "--level", "bogus"}, "400 Bad Request", "bogus")

		// A failed phase is an error-level event; --level shows it alone,
		// in the log and in the stream.
		id := picked.SystemID
		e.ok("machine", "commission", id)
		if _, _, err := e.srv.Service.Act(context.Background(), machine.SystemActor, id,
			machine.Input{Action: machine.Fail, Comment: "no disks found"}); err != nil {
			t.Fatal(err)
		}
		if got := e.showJSON(id); got.StatusName != "Failed commissioning" {
			t.Errorf("after a failed commissioning: %s", got.StatusName)
		}
		out := e.ok("events", "--level", "error")
		if lineWith(out, picked.Hostname, "ERROR", "Failed", "no disks found") == "" || strings.Contains(out, "INFO") {
			t.Errorf("events --level error:\n%s", out)
		}

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var fout, ferr syncBuffer
		done := make(chan int, 1)
		go func() {
			_, _, code := e.runContext(ctx, &fout, &ferr, "events", "--follow", "--level", "warning", "--id", id)
			done <- code
		}()
		fout.waitFor(t, "no disks found")
		e.ok("machine", "commission", id) // INFO: not shown
		e.ok("machine", "mark-broken", picked.Hostname, "--comment", "not shown either")
		e.ok("machine", "mark-fixed", picked.Hostname)
		e.ok("machine", "commission", id)
		if _, _, err := e.srv.Service.Act(context.Background(), machine.SystemActor, id,
			machine.Input{Action: machine.Fail, Comment: "still no disks"}); err != nil {
			t.Fatal(err)
		}
		fout.waitFor(t, "still no disks")
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("events --follow --level: exit %d, stderr %q", code, ferr.String())
		}
		got := fout.String()
		if strings.Contains(got, "INFO") || strings.Contains(got, "not shown") {
			t.Errorf("events --follow --level warning showed quieter events:\n%s", got)
		}

		// Times are the server's UTC, shown in local time (UTC in these
		// tests): they must parse, and be about now.
		out = e.ok("events", "--id", id)
		rows := strings.Split(strings.TrimSpace(out), "\n")[1:]
		if len(rows) < 5 {
			t.Fatalf("events --id %s: %d rows:\n%s", id, len(rows), out)
		}
		for _, row := range rows {
			ts, err := time.ParseInLocation("2006-01-02 15:04:05", row[:min(19, len(row))], time.Local)
			if err != nil || time.Since(ts).Abs() > 5*time.Minute {
				t.Errorf("event time in %q: %v (now %s)", row, err, time.Now().Format(time.DateTime))
			}
		}
	})
}
