package serve

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestMetadataURLFollowsTheBootURL(t *testing.T) {
	api := &net.TCPAddr{IP: net.IPv4zero, Port: 5240}
	for boot, want := range map[string]string{
		"http://192.0.2.1:5248":     "http://192.0.2.1:5240/MAAS/metadata/",
		"http://[2001:db8::1]:5248": "http://[2001:db8::1]:5240/MAAS/metadata/",
		"":                          "",
		"::nonsense":                "",
	} {
		if got := metadataURL(boot, api); got != want {
			t.Errorf("%q: %q, want %q", boot, got, want)
		}
	}
}

func TestMetricsShowTheRack(t *testing.T) {
	ctx := context.Background()
	srv, err := Start(ctx, Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", BootHTTPAddr: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	if srv.Rack == nil {
		t.Fatal("no rack in the process")
	}
	resp, err := http.Get("http://" + srv.Addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{"anvil_rack_cached_machines", "anvil_rack_pending_boot_events", "go_goroutines"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
