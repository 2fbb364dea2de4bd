package serve

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/rack"
)

func TestMetadataAt(t *testing.T) {
	for _, c := range []struct {
		listen, dhcp string
		url, port    string
		refused      bool
	}{
		{listen: "0.0.0.0:5240", port: "5240"}, // the rack puts the boot URL's host in front
		{listen: "[::]:5240", dhcp: "br0", port: "5240"},
		{listen: "192.0.2.5:5240", dhcp: "br0", url: "http://192.0.2.5:5240/MAAS/metadata/", port: "5240"},
		{listen: "127.0.0.1:5240", url: "http://127.0.0.1:5240/MAAS/metadata/", port: "5240"},
		{listen: "127.0.0.1:5240", dhcp: "lo", url: "http://127.0.0.1:5240/MAAS/metadata/", port: "5240"},
		{listen: "127.0.0.1:5240", dhcp: "br0", refused: true},
	} {
		api, err := net.ResolveTCPAddr("tcp", c.listen)
		if err != nil {
			t.Fatal(err)
		}
		u, port, err := metadataAt(Config{DHCPInterface: c.dhcp}, api)
		var ue *rack.UnreachableError
		if c.refused != errors.As(err, &ue) || u != c.url || port != c.port && !c.refused {
			t.Errorf("--listen %s, DHCP on %q: %q %q %v", c.listen, c.dhcp, u, port, err)
		}
		if c.refused && !strings.Contains(err.Error(), "set --listen") {
			t.Errorf("refusal %q does not name --listen", err)
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
