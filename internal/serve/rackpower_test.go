package serve

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// TestPowerRunsOnTheProcessRack: `anvil serve` sends its power commands
// through its own rack over the API, as a remote rack would; with
// RackPower.Remote and no rack anywhere, a command is refused at once.
func TestPowerRunsOnTheProcessRack(t *testing.T) {
	for _, remote := range []bool{false, true} {
		ctx := context.Background()
		dir := t.TempDir()
		srv, err := Start(ctx, Config{DataDir: dir, Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			RackPower: RackPower{Remote: remote}})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close(ctx)
		if (srv.PowerWorker == nil) != remote {
			t.Fatalf("remote=%v: power worker %v", remote, srv.PowerWorker)
		}
		key, err := APIKey(ctx, dir, "", "admin")
		if err != nil {
			t.Fatal(err)
		}
		cl, err := client.New("http://"+srv.Addr.String()+"/MAAS/", key)
		if err != nil {
			t.Fatal(err)
		}
		m, err := cl.CreateMachine(ctx, url.Values{"hostname": {"m"}, "architecture": {"amd64/generic"}, "mac_addresses": {"52:54:00:7a:00:01"},
			"power_type": {"manual"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.Do(ctx, http.MethodPost, "machines/"+m.SystemID+"/", url.Values{"op": {"power_on"}}, url.Values{})
		if remote {
			if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "no rack is running power commands") {
				t.Fatalf("power on with no rack: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			q, _ := srv.Service.Power.Queue(ctx, m.SystemID)
			evs, _ := srv.Store.QueryEvents(ctx, store.EventFilter{SystemIDs: []string{m.SystemID}})
			if len(q) == 0 && hasEvent(evs, "Power on") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("power on not done: %+v", q)
			}
			time.Sleep(20 * time.Millisecond)
		}
		rs, err := srv.Store.RackPowers(ctx, time.Now().Add(-time.Minute))
		if err != nil || len(rs) != 1 || rs[0].ID != srv.PowerWorker.ID() || strings.Join(rs[0].Networks, ",") != "0.0.0.0/0,::/0" {
			t.Fatalf("the process's rack as the region knows it: %+v %v", rs, err)
		}
	}
}

func hasEvent(evs []machine.Event, typ string) bool {
	for _, e := range evs {
		if e.Type == typ {
			return true
		}
	}
	return false
}
