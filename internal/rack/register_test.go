package rack_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// TestRackRegistration runs a real rack against a real region: it
// enrols with a one-time secret, keeps its credential private in its data
// directory, reports its services as they run, comes back after a
// restart without a secret, and once an administrator deletes it its
// calls are refused (its power service shows it). A rack with neither a
// credential nor a secret or key does not start.
func TestRackRegistration(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { rackRegistration(t, "") })
	t.Run("postgres", func(t *testing.T) { rackRegistration(t, pgtest.URL(t)) })
}

func rackRegistration(t *testing.T, dbURL string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	srv, err := serve.Start(ctx, serve.Config{DataDir: dir, DBURL: dbURL, Listen: "127.0.0.1:0", Log: log, RackPower: serve.RackPower{Remote: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	base := "http://" + srv.Addr.String() + "/MAAS/"
	admin, err := serve.APIKey(ctx, dir, dbURL, "admin")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(base, admin)
	if err != nil {
		t.Fatal(err)
	}
	// The administrator grants the rack the BMC network it declares.
	secret, _, err := serve.RackSecret(ctx, dir, dbURL, time.Hour, "192.0.2.0/24")
	if err != nil {
		t.Fatal(err)
	}

	rackDir := t.TempDir()
	cfg := rack.Config{
		DataDir: rackDir, RegionURL: base, EnrolSecret: secret, Hostname: "rack-one", Log: log,
		TFTPAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0",
		Power: &rack.PowerConfig{Networks: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}, Drivers: serve.Drivers(), Wait: time.Second, Log: log},
	}
	rk, err := rack.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rk.SystemID == "" {
		t.Fatal("the rack has no system id after enrolling")
	}
	fi, err := os.Stat(filepath.Join(rackDir, rack.CredentialsFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	b, _ := os.ReadFile(filepath.Join(rackDir, rack.CredentialsFile))
	if strings.Contains(string(b), secret) {
		t.Fatal("the rack kept the enrolment secret")
	}

	type svc struct {
		Name       string `json:"name"`
		Status     string `json:"status"`
		StatusInfo string `json:"status_info"`
	}
	read := func() (services map[string]svc, nets []string, enrolled bool) {
		t.Helper()
		body, err := cl.Do(ctx, http.MethodGet, "rackcontrollers/"+rk.SystemID+"/", nil, nil)
		if err != nil {
			return nil, nil, false
		}
		var r struct {
			Services []svc    `json:"service_set"`
			Nets     []string `json:"bmc_networks"`
			Enrolled bool     `json:"enrolled"`
		}
		_ = json.Unmarshal(body, &r)
		services = map[string]svc{}
		for _, s := range r.Services {
			services[s.Name] = s
		}
		return services, r.Nets, r.Enrolled
	}
	want := map[string]string{"rackd": "running", "tftp": "running", "http": "running", "dns_rack": "running", "power": "running", "dhcpd": "off"}
	reported := func() bool {
		got, nets, enrolled := read()
		for n, st := range want {
			if got[n].Status != st {
				return false
			}
		}
		return enrolled && len(nets) == 1 && nets[0] == "192.0.2.0/24" && strings.Contains(got["tftp"].StatusInfo, rk.TFTP.String())
	}
	waitFor(t, "the rack's report of its services", reported)
	// Its power claims name it as it enrolled, not by this host's name.
	rps, err := srv.Store.RackPowers(ctx, time.Now().Add(-time.Minute))
	if err != nil || len(rps) != 1 || rps[0].Hostname != "rack-one" {
		t.Fatalf("power racks: %+v %v", rps, err)
	}

	// Restarted, it needs no secret: the one it had is spent anyway.
	id := rk.SystemID
	if err := rk.Close(); err != nil {
		t.Fatal(err)
	}
	if rk, err = rack.Start(ctx, cfg); err != nil {
		t.Fatalf("restart with its credential: %v", err)
	}
	defer rk.Close()
	if rk.SystemID != id {
		t.Fatalf("restarted as %s, was %s", rk.SystemID, id)
	}
	waitFor(t, "the restarted rack's report", reported)

	if _, err := cl.Do(ctx, http.MethodDelete, "rackcontrollers/"+id+"/", nil, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted rack's power claims to be refused", func() bool {
		for _, s := range rk.Services() {
			if s.Name == rack.ServicePower {
				return s.Status == rack.StatusDegraded && strings.Contains(s.Info, "401")
			}
		}
		return false
	})

	_, err = rack.Start(ctx, rack.Config{DataDir: t.TempDir(), RegionURL: base, Log: log})
	if err == nil || !strings.Contains(err.Error(), "enrolment secret") {
		t.Fatalf("a rack with no credential started: %v", err)
	}
}
