package rack_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
)

// TestBootEventsWaitForTheRegion: events seen while the region is down
// reach it once it is up; known MACs land on their machine, unknown ones
// are listed as discoveries.
func TestBootEventsWaitForTheRegion(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Reserve a port, and start the region on it only later.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	key, err := serve.APIKey(ctx, dir, "", "rack")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New("http://"+addr+"/MAAS/", key)
	if err != nil {
		t.Fatal(err)
	}
	rep := rack.NewReporter(100)
	go rep.Run(ctx, cl, log)
	rep.Add(rack.BootEvent{MAC: "52:54:00:00:30:01", Kind: "tftp", Detail: "sent pxelinux.0", At: time.Now()})
	rep.Add(rack.BootEvent{MAC: "52:54:00:00:30:99", Kind: "dhcp", Detail: "offer 192.0.2.150", IP: "192.0.2.150", At: time.Now()})
	time.Sleep(300 * time.Millisecond)
	if rep.Pending() != 2 {
		t.Fatalf("%d pending with the region down, want 2", rep.Pending())
	}
	srv, err := serve.Start(ctx, serve.Config{DataDir: dir, Listen: addr, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	m, err := cl.CreateMachine(ctx, url.Values{"hostname": {"known"}, "mac_addresses": {"52:54:00:00:30:01"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the events to be sent", func() bool { return rep.Pending() == 0 })
	page, err := cl.QueryEvents(ctx, url.Values{"id": {m.SystemID}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range page.Events {
		if e.Type == "Boot tftp" && e.Description == "sent pxelinux.0" {
			found = true
		}
	}
	if !found {
		t.Fatalf("boot event not on the machine: %+v", page.Events)
	}
	raw, err := cl.Do(ctx, "GET", "discoveries/", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ds []map[string]any
	if err := json.Unmarshal(raw, &ds); err != nil || len(ds) != 1 || ds[0]["mac_address"] != "52:54:00:00:30:99" || ds[0]["ip"] != "192.0.2.150" {
		t.Fatalf("discoveries %s %v", raw, err)
	}
}
