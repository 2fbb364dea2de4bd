package agent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

func TestImageSourcePrefersTheRack(t *testing.T) {
	have := "aa11"
	rack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/images/"+have {
			http.NotFound(w, r)
		}
	}))
	defer rack.Close()
	a := &Agent{Console: io.Discard}
	region := "http://region/MAAS/api/2.0/images/"
	ctx := context.Background()
	if got := a.imageSource(ctx, rack.Client(), agentapi.Image{SHA256: have}, region+have); got != region+have {
		t.Fatalf("without anvil.boot: %s", got)
	}
	a.Cmdline.Boot = rack.URL
	if got := a.imageSource(ctx, rack.Client(), agentapi.Image{SHA256: have}, region+have); got != rack.URL+"/images/"+have {
		t.Fatalf("rack has it: %s", got)
	}
	if got := a.imageSource(ctx, rack.Client(), agentapi.Image{SHA256: "bb22"}, region+"bb22"); got != region+"bb22" {
		t.Fatalf("rack lacks it: %s", got)
	}
}

func TestSeedNetworkConfig(t *testing.T) {
	files := seedFiles(agentapi.Task{InstanceID: "abc", Hostname: "web-1"}, "52:54:00:0e:00:f1", "")
	if len(files) != 3 || files[2].Name != "network-config" ||
		!strings.Contains(string(files[2].Data), "macaddress: \"52:54:00:0e:00:f1\"") && !strings.Contains(string(files[2].Data), "macaddress: 52:54:00:0e:00:f1") {
		t.Fatalf("seed files: %+v", files)
	}
	// The region's rendered model wins over the one-NIC DHCP default.
	rendered := "network:\n  version: 2\n  bonds:\n    bond0:\n      interfaces: [eth0, eth1]\n"
	files = seedFiles(agentapi.Task{InstanceID: "abc", NetworkConfig: rendered}, "52:54:00:0e:00:f1", "")
	if len(files) != 3 || files[2].Name != "network-config" || string(files[2].Data) != rendered {
		t.Fatalf("rendered network-config: %+v", files)
	}
	if files := seedFiles(agentapi.Task{InstanceID: "abc"}, "", ""); len(files) != 2 {
		t.Fatalf("without a boot MAC: %d files", len(files))
	}
	// With the region's os-up URL the seed asks cloud-init to report there.
	files = seedFiles(agentapi.Task{InstanceID: "abc"}, "", "http://192.0.2.1:5240/MAAS/metadata/anvil/v1/os-up/c:k:s")
	if len(files) != 3 || files[2].Name != "vendor-data" ||
		!strings.Contains(string(files[2].Data), "phone_home:\n  url: \"http://192.0.2.1:5240/MAAS/metadata/anvil/v1/os-up/c:k:s\"") &&
			!strings.Contains(string(files[2].Data), "phone_home:\n  url: http://192.0.2.1:5240/MAAS/metadata/anvil/v1/os-up/c:k:s\n") {
		t.Fatalf("vendor-data: %+v", files)
	}
}
