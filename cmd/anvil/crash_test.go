package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
)

// TestKillLeavesNoHalfMachine builds anvil, creates machines through the
// API from several clients, kills the server with SIGKILL in the middle,
// and checks that every stored machine is whole: its interfaces and its
// creation event are there, and nothing else is.
func TestKillLeavesNoHalfMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "anvil")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	ctx := context.Background()
	key, err := serve.APIKey(ctx, data, "", "admin")
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		port := freePort(t)
		srv := exec.Command(bin, "serve", "--data", data, "--listen", "127.0.0.1:"+port, "--log-level", "error")
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		base := "http://127.0.0.1:" + port + "/MAAS/api/2.0/machines/"
		waitFor(t, "http://127.0.0.1:"+port+"/healthz")
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					f := url.Values{"mac_addresses": {
						fmt.Sprintf("52:54:%02x:%02x:%02x:01", round, w, i%256),
						fmt.Sprintf("52:54:%02x:%02x:%02x:02", round, w, i%256),
					}}
					req, _ := http.NewRequest("POST", base, strings.NewReader(f.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					req.Header.Set("Authorization", authHeader(key))
					if resp, err := http.DefaultClient.Do(req); err == nil {
						resp.Body.Close()
					}
				}
			}(w)
		}
		time.Sleep(time.Duration(300+round*170) * time.Millisecond)
		_ = srv.Process.Signal(syscall.SIGKILL)
		_ = srv.Wait()
		close(stop)
		wg.Wait()
	}

	st, err := serve.OpenStore(ctx, data, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ms, err := st.ListMachines(ctx, store.MachineFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no machine was created before the kills; the test proves nothing")
	}
	for _, m := range ms {
		if len(m.Interfaces) != 2 {
			t.Errorf("machine %s has %d interfaces, want 2", m.SystemID, len(m.Interfaces))
		}
		evs, err := st.QueryEvents(ctx, store.EventFilter{SystemIDs: []string{m.SystemID}})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Type != "Created" {
			t.Errorf("machine %s has events %v, want its creation", m.SystemID, evs)
		}
	}
	// No event of a machine that was not stored.
	live := map[string]bool{}
	for _, m := range ms {
		live[m.SystemID] = true
	}
	total := 0
	for before := int64(0); ; {
		page, err := st.QueryEvents(ctx, store.EventFilter{Limit: 1000, BeforeID: before})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			if !live[e.SystemID] {
				t.Errorf("event %d belongs to machine %s, which was not stored", e.ID, e.SystemID)
			}
		}
		total += len(page)
		if len(page) < 1000 {
			break
		}
		before = page[len(page)-1].ID
	}
	if total != len(ms) {
		t.Errorf("%d events for %d machines", total, len(ms))
	}
	t.Logf("%d machines survived 3 kills intact", len(ms))
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p
}

func waitFor(t *testing.T, u string) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("server not up at %s", u)
}

func authHeader(key string) string {
	p := strings.SplitN(key, ":", 3)
	return `OAuth oauth_version="1.0", oauth_signature_method="PLAINTEXT", oauth_consumer_key="` + p[0] +
		`", oauth_token="` + p[1] + `", oauth_signature="&` + p[2] + `", oauth_nonce="n", oauth_timestamp="1"`
}
