package rack_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/metadata"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// from is an HTTP client whose connections leave from the loopback
// address ip, as a machine on the provisioning network talks from its own.
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

var enrolParam = regexp.MustCompile(agentapi.ParamEnrol + `=(\S+)`)

// TestEnrolSecretOnlyToItsHolder performs the attack on a running region
// and rack: a neighbour fetches a commissioning machine's per-MAC config
// over HTTP and gets no secret; the holder's copy, presented in a hello
// from the neighbour's address, is refused; from the holder's it proceeds.
func TestEnrolSecretOnlyToItsHolder(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { enrolOnlyToHolder(t, "", false) })
	t.Run("postgres", func(t *testing.T) { enrolOnlyToHolder(t, pgtest.URL(t), false) })
	// A rack that enrolled signs its sightings with its secret's hash,
	// which is all the region keeps.
	t.Run("enrolled-rack", func(t *testing.T) { enrolOnlyToHolder(t, "", true) })
}

func enrolOnlyToHolder(t *testing.T, dbURL string, enrolled bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	srv, err := serve.Start(ctx, serve.Config{DataDir: dir, DBURL: dbURL, Listen: "127.0.0.1:0", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	base := "http://" + srv.Addr.String() + "/MAAS/"
	key, err := serve.APIKey(ctx, dir, dbURL, "admin")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(base, key)
	if err != nil {
		t.Fatal(err)
	}
	const mac, holder, neighbour = "52:54:00:00:40:01", "127.0.0.2", "127.0.0.3"
	// The rack leased holder to mac (as its DHCP would have).
	holds := func(_ context.Context, m string) ([]netip.Addr, bool) {
		if !strings.EqualFold(m, mac) {
			return nil, false
		}
		return []netip.Addr{netip.MustParseAddr(holder)}, false
	}
	rcfg := rack.Config{DataDir: t.TempDir(), RegionURL: base, APIKey: key, HTTPAddr: "127.0.0.1:0", Log: log, Holder: holds}
	if enrolled {
		rcfg.APIKey = ""
		if rcfg.EnrolSecret, _, err = serve.RackSecret(ctx, dir, dbURL, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	rk, err := rack.Start(ctx, rcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rk.Close()

	m, err := cl.CreateMachine(ctx, url.Values{"hostname": {"victim"}, "mac_addresses": {mac}, "architecture": {"amd64/generic"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.MachineOp(ctx, m.SystemID, "commission", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rack to hold the secret", func() bool { e, ok := rk.Cache.ByMAC(mac); return ok && e.Enrol != "" })

	cfgURL := "http://" + rk.HTTP.String() + "/ipxe.cfg-" + mac
	fetch := func(ip string) string {
		t.Helper()
		resp, err := from(ip).Get(cfgURL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("config from %s: %d %s", ip, resp.StatusCode, b)
		}
		return string(b)
	}
	if c := fetch(neighbour); strings.Contains(c, agentapi.ParamEnrol) || !strings.Contains(c, "anvil.purpose=ephemeral") {
		t.Fatalf("config served to a neighbour:\n%s", c)
	}
	got := enrolParam.FindStringSubmatch(fetch(holder))
	if got == nil {
		t.Fatal("the holder's config has no enrolment secret")
	}
	hello := agentapi.HelloRequest{Identity: agentapi.Identity{MACs: []string{mac}, BootMAC: mac, Arch: "amd64/generic", Firmware: "bios"},
		Purpose: "ephemeral", Enrol: got[1]}
	agent := func(ip string) *agentapi.Client {
		return &agentapi.Client{Base: strings.TrimSuffix(base, "/MAAS/") + metadata.Prefix, HTTP: from(ip)}
	}
	if r, err := agent(neighbour).Hello(ctx, hello); err != nil || r.Action == agentapi.ActionProceed || r.Token != "" {
		t.Fatalf("the holder's secret from a neighbour: %+v %v", r, err)
	}
	if r, err := agent(holder).Hello(ctx, hello); err != nil || r.Action != agentapi.ActionProceed || r.Token == "" {
		t.Fatalf("the holder's secret from the holder: %+v %v", r, err)
	}
}
