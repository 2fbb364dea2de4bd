package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
)

// maasControllerFields are MAAS's DISPLAYED_REGION_CONTROLLER_FIELDS; a
// rack has service_set as well.
var maasControllerFields = []string{"system_id", "hostname", "description", "hardware_uuid", "domain", "fqdn",
	"architecture", "cpu_count", "cpu_speed", "memory", "swap_size", "osystem", "distro_series", "power_type",
	"power_state", "ip_addresses", "interface_set", "zone", "status_action", "node_type", "node_type_name",
	"current_commissioning_result_id", "current_testing_result_id", "current_installation_result_id", "version",
	"commissioning_status", "commissioning_status_name", "testing_status", "testing_status_name", "cpu_test_status",
	"cpu_test_status_name", "memory_test_status", "memory_test_status_name", "network_test_status",
	"network_test_status_name", "storage_test_status", "storage_test_status_name", "other_test_status",
	"other_test_status_name", "hardware_info", "tag_names", "interface_test_status", "interface_test_status_name"}

type apiController struct {
	SystemID     string   `json:"system_id"`
	Hostname     string   `json:"hostname"`
	Version      string   `json:"version"`
	NodeType     int      `json:"node_type"`
	NodeTypeName string   `json:"node_type_name"`
	IPs          []string `json:"ip_addresses"`
	Services     []struct {
		Name, Status string
	} `json:"service_set"`
	HW       map[string]string `json:"hardware_info"`
	Enrolled bool              `json:"enrolled"`
}

// controllers reads a controller collection as the maas CLI does, checks
// every object has MAAS's fields, and reads each one by its system_id.
func (e *env) controllers(path string) []apiController {
	e.t.Helper()
	a := e.mustCLI(200, "GET", path, e.user, nil)
	var raw []map[string]json.RawMessage
	var cs []apiController
	// The types gomaasclient's entity.RackController gives the fields
	// most likely to disagree.
	var typed []struct {
		IPAddresses  []net.IP `json:"ip_addresses"`
		SwapSize     int64    `json:"swap_size"`
		Memory       int64    `json:"memory"`
		CPUSpeed     int      `json:"cpu_speed"`
		HardwareUUID string   `json:"hardware_uuid"`
		TestingID    int      `json:"current_testing_result_id"`
		Domain       struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
			TTL  int    `json:"ttl"`
		} `json:"domain"`
		Zone struct {
			Name string `json:"name"`
		} `json:"zone"`
		Services []struct{ Name, Status, StatusInfo string } `json:"service_set"`
	}
	if json.Unmarshal(a.body, &raw) != nil || json.Unmarshal(a.body, &cs) != nil || json.Unmarshal(a.body, &typed) != nil {
		e.t.Fatalf("%s: %s", path, a.body)
	}
	for i, c := range raw {
		for _, f := range maasControllerFields {
			if _, ok := c[f]; !ok {
				e.t.Errorf("%s: %s lacks MAAS's %s", path, cs[i].SystemID, f)
			}
		}
		var one apiController
		b := e.mustCLI(200, "GET", path+cs[i].SystemID+"/", e.user, nil)
		if json.Unmarshal(b.body, &one) != nil || one.SystemID != cs[i].SystemID || one.Hostname != cs[i].Hostname {
			e.t.Errorf("%s%s/: %s", path, cs[i].SystemID, b.body)
		}
	}
	return cs
}

// TestControllers: the region answering is listed by regioncontrollers/
// with its version, and a rack that follows the boot stream (as `anvil
// rack` does) is listed by rackcontrollers/ with the name and version it
// gave and the address it came from.
func TestControllers(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		// The server's own rack (its power worker) is enrolled from the
		// start.
		hostname, _ := os.Hostname()
		own := e.controllers("rackcontrollers/")
		if len(own) != 1 || own[0].Hostname != hostname || !own[0].Enrolled {
			t.Fatalf("racks before any followed: %+v", own)
		}
		var regions []apiController
		for deadline := time.Now().Add(5 * time.Second); len(regions) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			regions = e.controllers("regioncontrollers/")
		}
		if len(regions) != 1 || regions[0].Hostname != hostname || regions[0].Version != serve.Version || regions[0].NodeType != 3 ||
			regions[0].NodeTypeName != "Region controller" || len(regions[0].IPs) != 1 || regions[0].HW["cpu_model"] != "Unknown" {
			t.Fatalf("regions: %+v", regions)
		}

		// gomaasclient reads a controller's details as a machine's.
		if d := e.details("regioncontrollers/" + regions[0].SystemID + "/"); len(d) != 2 || d["lshw"] != nil || d["lldp"] != nil {
			t.Fatalf("region details: %v", d)
		}

		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		key, err := serve.APIKey(ctx, e.dataDir, e.dbURL, "rack")
		if err != nil {
			t.Fatal(err)
		}
		cl, err := client.New(e.base, key)
		if err != nil {
			t.Fatal(err)
		}
		cl.UserAgent = rack.RackAgent + "9.8.7"
		done := make(chan struct{})
		go func() {
			defer close(done)
			rack.Follow(ctx, cl, rack.NewCache(t.TempDir()+"/cache.json"), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		}()
		defer func() { stop(); <-done }()
		var racks []apiController
		for deadline := time.Now().Add(5 * time.Second); len(racks) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			racks = slices.DeleteFunc(e.controllers("rackcontrollers/"), func(c apiController) bool { return c.SystemID == own[0].SystemID })
		}
		host, _ := os.Hostname()
		if len(racks) != 1 || racks[0].Hostname != host || racks[0].Version != "9.8.7" || racks[0].NodeType != 2 || racks[0].Enrolled ||
			len(racks[0].IPs) != 1 || racks[0].IPs[0] != "127.0.0.1" || len(racks[0].Services) != 1 ||
			racks[0].Services[0].Name != "rackd" || racks[0].Services[0].Status != "running" {
			t.Fatalf("racks: %+v", racks)
		}
	})
}
