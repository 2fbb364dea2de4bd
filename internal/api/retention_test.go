package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
)

// Anonymous boot requests for unknown MACs cannot grow the discoveries
// without end, and old events and discoveries are pruned.
func TestDiscoveriesAndEventsArePruned(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		st := e.srv.Store
		old := time.Now().Add(-2 * time.Hour)
		if err := st.AppendEvents(ctx, machine.Event{Type: "Old", Level: machine.LevelInfo, Description: "long ago", Created: old}); err != nil {
			t.Fatal(err)
		}
		if err := st.NoteDiscovery(ctx, store.Discovery{MAC: "52:54:00:cc:ff:ff", LastSeen: old, LastWhat: "long ago"}); err != nil {
			t.Fatal(err)
		}
		fresh := e.addMachine("fresh", "52:54:00:cc:00:00", nil) // its creation event is new
		// Twenty unknown MACs ask the rack for their boot config.
		for i := 0; i < 20; i++ {
			resp, err := http.Get(fmt.Sprintf("http://%s/ipxe.cfg-52:54:00:cc:01:%02x", e.srv.Rack.HTTP, i))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			ds, err := st.ListDiscoveries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := st.QueryEvents(ctx, store.EventFilter{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			oldEvent, freshEvent := false, false
			for _, ev := range evs {
				oldEvent = oldEvent || ev.Type == "Old"
				freshEvent = freshEvent || ev.SystemID == fresh.SystemID
			}
			oldDisc := false
			for _, d := range ds {
				oldDisc = oldDisc || d.MAC == "52:54:00:cc:ff:ff"
			}
			if len(ds) == 5 && !oldEvent && !oldDisc && freshEvent {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 20 s: %d discoveries (cap 5), old event kept %v, old discovery kept %v, fresh event kept %v",
					len(ds), oldEvent, oldDisc, freshEvent)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}, func(c *serve.Config) {
		c.BootHTTPAddr = "127.0.0.1:0"
		c.Retention = store.Retention{EventAge: time.Hour, DiscoveryAge: time.Hour, MaxDiscoveries: 5}
		c.PruneEvery = 200 * time.Millisecond
	})
}
