package rack_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRackFollowsRegionAndOutlivesIt: the rack's cache follows the
// region's machines, keeps answering when the region stops, and a rack
// restarted while the region is down answers from disk.
func TestRackFollowsRegionAndOutlivesIt(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := serve.Start(ctx, serve.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = srv.Close(ctx)
		}
	})
	key, err := serve.APIKey(ctx, srv.DataDir(), "", "rack")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + srv.Addr.String() + "/MAAS/"
	cl, err := client.New(base, key)
	if err != nil {
		t.Fatal(err)
	}
	// One machine before the rack connects, one after.
	m1, err := cl.CreateMachine(ctx, url.Values{"hostname": {"early"}, "mac_addresses": {"52:54:00:00:20:01"}})
	if err != nil {
		t.Fatal(err)
	}
	cachePath := filepath.Join(t.TempDir(), "boot-cache.json")
	cache := rack.NewCache(cachePath)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	go rack.Follow(fctx, cl, cache, log, nil)
	waitFor(t, "the snapshot", func() bool { _, ok := cache.ByMAC("52:54:00:00:20:01"); return ok })
	if _, err := cl.CreateMachine(ctx, url.Values{"hostname": {"late"}, "mac_addresses": {"52:54:00:00:20:02"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new machine", func() bool { _, ok := cache.ByMAC("52:54:00:00:20:02"); return ok })
	if _, err := cl.MachineOp(ctx, m1.SystemID, "commission", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the status change", func() bool {
		e, _ := cache.ByMAC("52:54:00:00:20:01")
		return e.Status == machine.Commissioning && e.Purpose == machine.BootEphemeral
	})
	if err := cl.DeleteMachine(ctx, m1.SystemID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deletion", func() bool { _, ok := cache.ByMAC("52:54:00:00:20:01"); return !ok })

	// The region stops: the rack still answers.
	closed = true
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if e, ok := cache.ByMAC("52:54:00:00:20:02"); !ok || e.Hostname != "late" {
		t.Fatalf("with the region down the cache answers %+v %v", e, ok)
	}
	stop()
	if err := cache.Save(); err != nil {
		t.Fatal(err)
	}
	// A rack restarted while the region is down answers from disk.
	again := rack.NewCache(cachePath)
	if err := again.Load(); err != nil {
		t.Fatal(err)
	}
	if e, ok := again.ByMAC("52:54:00:00:20:02"); !ok || e.Hostname != "late" {
		t.Fatalf("restarted rack answers %+v %v", e, ok)
	}
	if again.Len() != 1 {
		t.Fatalf("restarted rack knows %d machines, want 1", again.Len())
	}
}
