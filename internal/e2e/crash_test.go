package e2e

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/lab/fleet"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// TestKillDuringActions kills anvil serve with SIGKILL at random moments
// while clients commission and abort half the machines behind lab IPMI
// BMCs and allocate and release the other half, then restarts it and
// checks that no machine waits on a power command nobody will send:
// every machine left in Commissioning has its BMC on or a command in the
// queue, and every machine left in Releasing has a command in the queue
// (Releasing ends when its power-off is recorded). A status change stored
// without its request, or a command's end stored without the step it
// implies, leaves such a machine until its phase times out.
func TestKillDuringActions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the anvil binary and kills it")
	}
	t.Parallel() // its BMCs and servers are on loopback ports of its own
	bin := anvilBinary(t)
	t.Run("sqlite", func(t *testing.T) { killRounds(t, bin, "") })
	t.Run("postgres", func(t *testing.T) { killRounds(t, bin, pgtest.URL(t)) })
}

func killRounds(t *testing.T, bin, db string) {
	const machines, rounds = 16, 8
	f, err := fleet.Start(fleet.Config{IPMI: machines, Host: "127.0.0.1", User: "admin", Password: "password"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	data := t.TempDir()
	addr := freeAddr(t)
	args := []string{"serve", "--data", data, "--listen", addr, "--tftp-listen", "", "--dns-listen", "", "--boot-http-listen", freeAddr(t),
		"--log-level", "warn", "--power-poll-interval", "1h"}
	if db != "" {
		args = append(args, "--db", db)
	}
	logf, err := os.Create(filepath.Join(data, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("serve log:\n%s", tail(b, 4000))
		}
	})
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if db != "" {
			cmd.Env = append(os.Environ(), "ANVIL_DB="+db)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	cmd := start()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	cl, err := client.New("http://"+addr+"/MAAS/", apikeyEnv(t, bin, data, db))
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path string, form url.Values) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if method == "GET" {
			return cl.Do(ctx, method, path, form, nil) // a GET's parameters travel in the query
		}
		return cl.Do(ctx, method, path, nil, form)
	}
	waitUp := func() {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if _, err := call("GET", "machines/", nil); err == nil {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("anvil serve did not come up: %v", err)
			}
		}
	}
	waitUp()
	ids := make([]string, len(f.Machines))
	for i, m := range f.Machines {
		form := url.Values{"hostname": {m.Hostname}, "mac_addresses": {m.MAC}, "architecture": {"amd64/generic"}, "power_type": {m.PowerType}}
		for k, v := range m.Params {
			form.Set("power_parameters_"+k, v)
		}
		b, err := call("POST", "machines/", form)
		if err != nil {
			t.Fatalf("add %s: %v", m.Hostname, err)
		}
		var got apiMachine
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		ids[i] = got.SystemID
		if i%2 == 1 {
			// Ready, to be allocated and released.
			for _, op := range []string{"mark_broken", "mark_fixed"} {
				if _, err := call("POST", "machines/"+got.SystemID+"/", url.Values{"op": {op}}); err != nil {
					t.Fatalf("%s %s: %v", op, m.Hostname, err)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, uint64(len(db))))
	for round := range rounds {
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for i, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					if i%2 == 1 {
						if n%2 == 0 {
							call("POST", "machines/", url.Values{"op": {"allocate"}, "system_id": {id}})
						} else {
							call("POST", "machines/"+id+"/", url.Values{"op": {"release"}})
						}
						continue
					}
					op := []string{"abort", "commission"}[(n+i)%2]
					call("POST", "machines/"+id+"/", url.Values{"op": {op}})
				}
			}()
		}
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		close(stop)
		wg.Wait()
		cmd = start()
		waitUp()
		// Commands queued before the kill run now (each BMC answers at
		// once); those left running wait for their lease.
		var stuck []string
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(250 * time.Millisecond) {
			stuck = stuck[:0]
			for i, id := range ids {
				b, err := call("GET", "machines/"+id+"/", nil)
				if err != nil {
					t.Fatal(err)
				}
				var m apiMachine
				json.Unmarshal(b, &m)
				switch {
				case m.StatusName == "Releasing":
				case m.StatusName == "Commissioning" && !f.Machines[i].Sim.IsOn():
				default:
					continue
				}
				// A command running when the server died stays running
				// until its lease expires; one queued waits its turn.
				b, err = call("GET", "machines/"+id+"/", url.Values{"op": {"power_queue"}})
				if err != nil {
					t.Fatal(err)
				}
				var q struct {
					InFlight json.RawMessage   `json:"in_flight"`
					Waiting  []json.RawMessage `json:"waiting"`
				}
				json.Unmarshal(b, &q)
				if len(q.Waiting) == 0 && (len(q.InFlight) == 0 || string(q.InFlight) == "null") {
					stuck = append(stuck, m.Hostname+" ("+m.StatusName+")")
				}
			}
			if len(stuck) == 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(stuck) > 0 {
			for i, id := range ids {
				if f.Machines[i].Sim.IsOn() {
					continue
				}
				b, err := cl.Do(context.Background(), "GET", "events/", url.Values{"op": {"query"}, "id": {id}, "limit": {"10"}}, nil)
				t.Logf("%s events: %v %s", id, err, tail(b, 3000))
			}
			t.Fatalf("round %d: %d machines wait on a power command nobody will send: %v", round, len(stuck), stuck)
		}
	}
}

func apikeyEnv(t *testing.T, bin, data, db string) string {
	c := exec.Command(bin, "apikey", "--username", "admin", "--data", data)
	if db != "" {
		c.Env = append(os.Environ(), "ANVIL_DB="+db)
	}
	out, err := c.Output()
	if err != nil {
		t.Fatalf("apikey: %v", err)
	}
	return string(out[:len(out)-1])
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
