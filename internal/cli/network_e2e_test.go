package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// TestE2ESubnetsAndRanges creates, lists and deletes a subnet and a range
// through the CLI against a real server; the server's refusals come
// through in words.
func TestE2ESubnetsAndRanges(t *testing.T) {
	eachDB(t, func(t *testing.T, e *e2e) {
		e.login()
		out := e.ok("subnets", "create", "192.0.2.0/24", "--name", "lab", "--gateway", "192.0.2.1", "--dns", "192.0.2.53", "--dhcp")
		m := regexp.MustCompile(`^Subnet (\d+): 192\.0\.2\.0/24 \(lab\), DHCP on\.\n$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("subnets create printed %q", out)
		}
		sid := m[1]
		e.fails([]string{"subnets", "create", "192.0.2.0/33"}, "400 Bad Request", "cidr")
		e.fails([]string{"subnets", "create", "198.51.100.0/24", "--gateway", "192.0.2.1"}, "gateway_ip")
		if out := e.ok("subnets", "list"); !strings.HasPrefix(out, "ID ") || lineWith(out, sid, "lab", "192.0.2.0/24", "192.0.2.1", "192.0.2.53", "on") == "" {
			t.Errorf("subnets list:\n%s", out)
		}

		out = e.ok("ipranges", "create", "192.0.2.100", "192.0.2.199", "--comment", "machines")
		m = regexp.MustCompile(`^IP range (\d+): dynamic 192\.0\.2\.100-192\.0\.2\.199 in subnet ` + sid + `\.\n$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("ipranges create printed %q", out)
		}
		rid := m[1]
		e.ok("ipranges", "create", "192.0.2.10", "192.0.2.19", "--type", "reserved", "--subnet", "lab")
		e.fails([]string{"ipranges", "create", "192.0.2.150", "192.0.2.210"}, "400 Bad Request", "Requested dynamic range conflicts with an existing IP address or range.")
		e.fails([]string{"ipranges", "create", "198.51.100.1", "198.51.100.9"}, "subnet")
		e.fails([]string{"ipranges", "create", "192.0.2.1", "192.0.2.2", "--subnet", "nowhere"}, `no subnet "nowhere"`)
		out = e.ok("ipranges", "list")
		if lineWith(out, rid, "dynamic", "192.0.2.100", "192.0.2.199", "192.0.2.0/24", "machines") == "" ||
			lineWith(out, "reserved", "192.0.2.10", "192.0.2.19") == "" {
			t.Errorf("ipranges list:\n%s", out)
		}
		if got, err := e.srv.Store.ListIPRanges(context.Background()); err != nil || len(got) != 2 {
			t.Fatalf("stored ranges: %+v %v", got, err)
		}

		if out := e.ok("ipranges", "delete", rid); out != "Deleted IP range "+rid+".\n" {
			t.Errorf("ipranges delete printed %q", out)
		}
		e.fails([]string{"ipranges", "delete", "lab"}, "not a range id")
		if out := e.ok("subnets", "delete", "lab"); out != "Deleted subnet "+sid+" (192.0.2.0/24).\n" {
			t.Errorf("subnets delete printed %q", out)
		}
		if ss, err := e.srv.Store.ListSubnets(context.Background()); err != nil || len(ss) != 0 {
			t.Errorf("subnets after delete: %+v %v", ss, err)
		}
	})
}

// TestE2EDeployImageUserData deploys with --image and --user-data: the
// machine is Deploying the named image with the file's bytes as its user
// data; a missing image and contradictory flags are refused.
func TestE2EDeployImageUserData(t *testing.T) {
	eachDB(t, func(t *testing.T, e *e2e) {
		e.login()
		e.ok("machine", "add", "--hostname", "web-1", "--mac", "52:54:00:e2:d0:01", "--arch", "amd64/generic")
		e.ok("machine", "commission", "web-1")
		ms, _ := e.srv.Store.ListMachines(context.Background(), store.MachineFilter{Hostnames: []string{"web-1"}})
		if len(ms) != 1 {
			t.Fatalf("machines: %+v", ms)
		}
		id := ms[0].SystemID
		e.act(id, machine.Succeed)
		if _, err := e.srv.Store.CreateBootResource(context.Background(), store.BootResource{Name: "debian-12", Architecture: "amd64/generic"},
			store.BootResourceFile{Filename: "root.tgz", Filetype: "tgz", SHA256: strings.Repeat("cd", 32), Size: 1, Complete: true}); err != nil {
			t.Fatal(err)
		}
		ud := "#cloud-config\nruncmd: [echo hello]\n"
		file := filepath.Join(t.TempDir(), "user-data")
		if err := os.WriteFile(file, []byte(ud), 0o600); err != nil {
			t.Fatal(err)
		}

		e.fails([]string{"machine", "deploy", "web-1", "--image", "custom/nosuch"}, "no image custom/nosuch is uploaded for amd64", "custom/debian-12")
		e.fails([]string{"machine", "deploy", "web-1", "--image", "debian-12", "--osystem", "ubuntu"}, "not both")
		e.fails([]string{"machine", "deploy", "web-1", "--image", "debian-12", "--user-data", file + ".missing"}, "--user-data")
		if got, _ := e.srv.Store.GetMachine(context.Background(), id); got.Status != machine.Ready {
			t.Fatalf("after refused deploys: %s", got.Status)
		}

		if out := e.ok("machine", "deploy", "web-1", "--image", "debian-12", "--user-data", file); !strings.HasPrefix(out, "web-1 ("+id+"): Deploying, power ") {
			t.Errorf("deploy printed %q", out)
		}
		got, err := e.srv.Store.GetMachine(context.Background(), id)
		if err != nil || got.Status != machine.Deploying || got.OSystem != "custom" || got.DistroSeries != "debian-12" || string(got.UserData) != ud {
			t.Fatalf("deployed machine: %s %s/%s user data %q, %v", got.Status, got.OSystem, got.DistroSeries, got.UserData, err)
		}
		if out := e.ok("machine", "show", "web-1"); !strings.Contains(out, "OS:             custom/debian-12\n") || !strings.Contains(out, "power it on now") {
			t.Errorf("machine show after deploy:\n%s", out)
		}
	})
}
