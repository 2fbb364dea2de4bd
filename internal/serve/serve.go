// Package serve assembles an Anvil process from its parts: the store, the
// region service, the API and the background loops. cmd/anvil parses flags
// and calls it; tests start a whole server the same way.
package serve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/anvilmetal/anvil/internal/password"
	"github.com/anvilmetal/anvil/internal/ui"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/anvilmetal/anvil/internal/api"
	"github.com/anvilmetal/anvil/internal/datalock"
	"github.com/anvilmetal/anvil/internal/dns"
	"github.com/anvilmetal/anvil/internal/httpserve"
	"github.com/anvilmetal/anvil/internal/images"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/metadata"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/power/ipmi"
	"github.com/anvilmetal/anvil/internal/power/redfish"
	"github.com/anvilmetal/anvil/internal/power/webhook"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/secret"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/store/open"
)

// Version is set at build time with -ldflags "-X .../serve.Version=...".
var Version = "dev"

// Config is what `anvil serve` takes.
type Config struct {
	DataDir string
	DBURL   string
	Listen  string
	// StatusTimeout is how long a monitored status may go without progress.
	StatusTimeout time.Duration
	// MonitorInterval is how often expired statuses are failed.
	MonitorInterval time.Duration
	// Power tunes the power coordinator (workers, timeouts, retries).
	Power power.Config
	// KeySources are where SSH key imports fetch from (empty: Launchpad
	// and GitHub).
	KeySources api.KeySources
	// AdvertiseURL is this region's base URL as other regions reach it
	// ("http://10.0.0.2:5240/MAAS/"); empty derives it from the listener
	// (the host name when it listens on every address).
	AdvertiseURL string
	// UI tunes the web pages (live stream polling, plot sampling).
	UI ui.Options
	// Monitor tunes the power monitor (poll interval, back-off).
	Monitor region.MonitorConfig
	// Metadata tunes the metadata API's anonymous rate limit.
	Metadata metadata.Options
	// DHCPInterface, when set, has the rack in this process serve DHCP
	// there for subnets with dhcp_on; DHCPProxy answers PXE only.
	DHCPInterface string
	DHCPProxy     bool
	NoRAReply     bool
	// EnlistCommission sends enlisting machines straight on to
	// commissioning instead of powering them off NEW.
	EnlistCommission bool
	// EnlistBMCUser is the IPMI user enlisting machines create in-band
	// (region.Service.EnlistBMCUser); empty leaves BMCs alone.
	EnlistBMCUser string
	// TFTPAddr and BootHTTPAddr, when set, run a rack in this process:
	// TFTP and HTTP boot answered from a cache this region feeds.
	TFTPAddr, BootHTTPAddr string
	// DNSAddr, when set, serves DNS from that rack (and runs it).
	DNSAddr string
	// DNSLimits bound what DNS clients may draw from that rack.
	DNSLimits dns.Limits
	// BootHTTPURL is the boot HTTP server as machines reach it.
	BootHTTPURL string
	// DriftGrace, when set, replaces how long after a power action a
	// disagreeing reading is expected rather than drift.
	DriftGrace time.Duration
	// HTTP bounds what one client may hold of the API's and the rack's
	// HTTP servers (timeouts, connections per address); zero fields take
	// httpserve.Defaults.
	HTTP httpserve.Limits
	// Retention is how long events and discoveries are kept; zero
	// fields take region.DefaultRetention, negative ones keep for ever.
	Retention store.Retention
	// PruneEvery is how often they are pruned (10 minutes when zero).
	PruneEvery time.Duration
	// TLS, when its certificate and key are set, serves the API and the
	// web pages over HTTPS as well (see tls.go).
	TLS TLSConfig
	// RackPower says where power commands run (see rackpower.go).
	RackPower RackPower
	Log       *slog.Logger
}

// OpenStore opens the configured database, creating and migrating it.
func OpenStore(ctx context.Context, dataDir, dbURL string) (store.Store, error) {
	sealer, err := secret.LoadOrCreate(dataDir)
	if err != nil {
		return nil, fmt.Errorf("load secret key: %w", err)
	}
	return open.Open(ctx, dbURL, dataDir, sealer)
}

// Drivers are the power drivers regions and racks run.
func Drivers() power.Registry {
	return power.NewRegistry(power.Manual{}, ipmi.Driver{}, redfish.Driver{}, webhook.Driver{})
}

// Server is a running Anvil process.
type Server struct {
	Addr    net.Addr // where the API listens
	Store   store.Store
	Service *region.Service
	Rack    *rack.Rack // nil when this process runs no rack
	// PowerWorker runs this process's power commands through its API
	// (nil with RackPower.Remote).
	PowerWorker *rack.PowerWorker
	// TLSAddr is where the API listens over HTTPS (nil without TLS).
	TLSAddr net.Addr
	metrics *prometheus.Registry
	servers []*http.Server
	lns     []net.Listener
	cancel  context.CancelFunc
	dataDir string
	lock    *datalock.Lock
	images  *images.Store
	loops   sync.WaitGroup
	done    chan error
}

// Start holds the data directory, opens the store, starts the API and the
// background loops, and returns once the listener is bound. A data
// directory another process holds is refused (datalock.HeldError); the
// database behind --db may be shared, each region having its own
// directory.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	lock, err := datalock.Acquire(cfg.DataDir, "anvil serve")
	if err != nil {
		return nil, err
	}
	s, err := start(ctx, cfg)
	if err != nil {
		_ = lock.Release()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

func start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.MonitorInterval == 0 {
		cfg.MonitorInterval = 30 * time.Second
	}
	st, err := OpenStore(ctx, cfg.DataDir, cfg.DBURL)
	if err != nil {
		return nil, err
	}
	lcfg := machine.DefaultConfig()
	if cfg.StatusTimeout > 0 {
		lcfg.Timeout = cfg.StatusTimeout
	}
	drivers := Drivers()
	pcfg := cfg.Power
	pcfg.Racks = true // racks run them: this process's own (startPower) or others
	svc := region.New(st, drivers, lcfg, pcfg, cfg.Log)
	svc.EnlistCommission = cfg.EnlistCommission
	svc.EnlistBMCUser = cfg.EnlistBMCUser
	if n, err := svc.CanonicaliseBMCs(ctx); err != nil {
		cfg.Log.Warn("BMC identities not brought to the canonical form", "err", err)
	} else if n > 0 {
		cfg.Log.Info("BMC identities brought to the canonical form", "machines", n)
	}
	if err := svc.EnsureScripts(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if cfg.DriftGrace != 0 {
		svc.Drift.Grace = cfg.DriftGrace
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	mux := http.NewServeMux()
	imgs, err := images.Open(cfg.DataDir)
	if err != nil {
		st.Close()
		ln.Close()
		return nil, fmt.Errorf("images: %w", err)
	}
	self := cfg.AdvertiseURL
	if self == "" {
		self = advertiseURL(ln.Addr())
	}
	apiSrv := api.New(svc, cfg.Log, api.Options{Version: Version, Images: imgs, Self: self, KeySources: cfg.KeySources})
	mux.Handle(api.Prefix, apiSrv)
	mux.Handle(metadata.Prefix, metadata.New(svc, cfg.Log, cfg.Metadata))
	uiOpts := cfg.UI
	uiOpts.Version = Version
	uiOpts.DNS = apiSrv.DNSData
	if uiOpts.BootDir == "" && (cfg.TFTPAddr != "" || cfg.BootHTTPAddr != "") {
		uiOpts.BootDir = filepath.Join(cfg.DataDir, "boot") // the rack's, started below
	}
	pages, err := ui.New(svc, cfg.Log, uiOpts)
	if err != nil {
		st.Close()
		ln.Close()
		return nil, fmt.Errorf("web pages: %w", err)
	}
	mux.Handle(ui.Prefix, pages)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, ui.Prefix, http.StatusSeeOther)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux.Handle("/metrics", promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}))
	// Long-lived requests (event streams) end when the server closes:
	// their contexts derive from bg.
	bg, cancel := context.WithCancel(context.Background())
	s := &Server{metrics: metrics, Addr: ln.Addr(), Store: st, Service: svc, cancel: cancel, dataDir: cfg.DataDir, images: imgs, done: make(chan error, 1)}
	if err := s.listen(bg, cfg, ln, mux); err != nil {
		cancel()
		st.Close()
		ln.Close()
		return nil, err
	}
	s.loops.Add(6)
	go func() {
		defer s.loops.Done()
		svc.RunPruner(bg, retention(cfg.Retention), cmp.Or(cfg.PruneEvery, 10*time.Minute))
	}()
	go func() { defer s.loops.Done(); s.announce(bg, self, cfg.Log) }()
	go func() { defer s.loops.Done(); pages.Run(bg) }()
	go func() { defer s.loops.Done(); svc.RunPowerMonitor(bg, cfg.Monitor) }()
	go func() { defer s.loops.Done(); svc.RunMonitor(bg, cfg.MonitorInterval) }()
	go func() { defer s.loops.Done(); svc.Power.Run(bg) }()
	if cfg.TFTPAddr != "" || cfg.BootHTTPAddr != "" || cfg.DNSAddr != "" {
		var unreachable *rack.UnreachableError
		if err := s.startRack(ctx, cfg); errors.As(err, &unreachable) {
			// Machines would be told URLs they cannot reach.
			_ = s.Close(ctx)
			return nil, err
		} else if err != nil {
			// The API is up; a rack that cannot bind (port 69 without
			// root) is reported, not fatal.
			cfg.Log.Error("rack not started", "err", err)
		}
	}
	s.serve()
	if err := s.startPower(ctx, cfg); err != nil {
		_ = s.Close(ctx)
		return nil, err
	}
	return s, nil
}

// startRack runs a rack in this process, following this region over
// loopback with a key of its own kept in the data directory.
func (s *Server) startRack(ctx context.Context, cfg Config) error {
	if _, err := rackCredentials(ctx, s.Store, cfg); err != nil {
		return err
	}
	meta, metaPort, err := metadataAt(cfg, s.Addr)
	if err != nil {
		return err
	}
	r, err := rack.Start(context.Background(), rack.Config{
		DataDir: cfg.DataDir, RegionURL: "http://" + loopback(s.Addr) + "/MAAS/", Version: Version,
		HeldDataDir: true, // by this process, in Start
		Images:      s.images,
		TFTPAddr:    cfg.TFTPAddr, HTTPAddr: cfg.BootHTTPAddr, HTTPBase: cfg.BootHTTPURL, HTTPLimits: cfg.HTTP, Log: cfg.Log,
		MetadataURL: meta, MetadataPort: metaPort,
		DHCPInterface: cfg.DHCPInterface, DHCPProxy: cfg.DHCPProxy, NoRAReply: cfg.NoRAReply, DNSAddr: cfg.DNSAddr, DNSLimits: cfg.DNSLimits,
	})
	if err != nil {
		return err
	}
	s.Rack = r
	if loopbackURL(r.Source.MetadataURL) && r.Source.HTTPBase != "" && !loopbackURL(r.Source.HTTPBase) {
		cfg.Log.Warn("machines booting from this rack cannot reach the metadata API on a loopback address; set --listen to an address they reach",
			"metadata_url", r.Source.MetadataURL, "boot_url", r.Source.HTTPBase)
	}
	return s.metrics.Register(rack.NewCollector(r))
}

func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(p.Hostname())
	return err == nil && ip.IsLoopback() || p.Hostname() == "localhost"
}

// rackCredentials returns the in-process rack's credential, enrolling it
// on first use as any rack enrols (a one-time secret, spent at once), so
// that it holds a rack's credential and not an administrator's key. The
// key an earlier version gave it (rack.key, of the admin user "rack") is
// revoked.
func rackCredentials(ctx context.Context, st store.Store, cfg Config) (rack.Credentials, error) {
	c, err := ownRackCredentials(ctx, st, cfg.DataDir)
	if err != nil {
		return c, err
	}
	// The rack in this process is the region's own: it is trusted with
	// the BMC networks given on this command line and with its host's
	// addresses, as an administrator would grant a rack.
	if err := st.GrantRack(ctx, c.SystemID, ownRackGrant(cfg.RackPower)); err != nil {
		return c, fmt.Errorf("grant this process's rack its networks: %w", err)
	}
	return c, nil
}

func ownRackCredentials(ctx context.Context, st store.Store, dataDir string) (rack.Credentials, error) {
	c, ok, err := rack.LoadCredentials(dataDir)
	if err != nil || ok {
		return c, err
	}
	host, _ := os.Hostname()
	secret, err := st.CreateRackSecret(ctx, "anvil serve", time.Now().Add(time.Minute))
	if err != nil {
		return rack.Credentials{}, err
	}
	cred, err := st.EnrolRack(ctx, secret, store.Rack{Hostname: cmp.Or(host, "localhost"), Address: "127.0.0.1", Version: Version})
	if err != nil {
		return rack.Credentials{}, err
	}
	c = rack.Credentials{SystemID: cred.RackID, Hostname: cred.Hostname, APIKey: cred.APIKey()}
	if err := rack.SaveCredentials(dataDir, c); err != nil {
		return rack.Credentials{}, err
	}
	retireRackKey(ctx, st, dataDir)
	return c, nil
}

// retireRackKey revokes the administrator's key an earlier version
// kept for the in-process rack.
func retireRackKey(ctx context.Context, st store.Store, dataDir string) {
	path := filepath.Join(dataDir, "rack.key")
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if parts := strings.Split(strings.TrimSpace(string(b)), ":"); len(parts) == 3 {
		_ = st.DeleteToken(ctx, "rack", parts[1])
	}
	_ = os.Remove(path)
}

// metadataAt is where booting machines reach this region's metadata API:
// at --listen when it names an address, else (URL empty) at the boot URL's
// host on the API's port. A loopback --listen while DHCP serves a real
// interface is refused: no machine there could report.
func metadataAt(cfg Config, api net.Addr) (metaURL, port string, err error) {
	host, port, _ := net.SplitHostPort(api.String())
	ip, perr := netip.ParseAddr(host)
	if perr != nil || ip.IsUnspecified() {
		return "", port, nil
	}
	if ip.IsLoopback() && cfg.DHCPInterface != "" && !loopbackIface(cfg.DHCPInterface) {
		return "", "", &rack.UnreachableError{What: "metadata URL", URL: "http://" + api.String() + "/MAAS/metadata/",
			Why:  "a loopback address, while DHCP is served on " + cfg.DHCPInterface + " to other machines",
			Flag: "--listen to an address there, or :" + port}
	}
	return "http://" + api.String() + "/MAAS/metadata/", port, nil
}

func loopbackIface(name string) bool {
	ifi, err := net.InterfaceByName(name)
	return err == nil && ifi.Flags&net.FlagLoopback != 0
}

// loopback is how the in-process rack reaches the API: over loopback
// when the API listens on every address, else at the one it listens on.
func loopback(a net.Addr) string {
	host, port, _ := net.SplitHostPort(a.String())
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// DataDir is where this server keeps its data.
func (s *Server) DataDir() string { return s.dataDir }

// Wait blocks until the HTTP server stops by itself (an error) or ctx ends.
func (s *Server) Wait(ctx context.Context) error {
	select {
	case err := <-s.done:
		return err
	case <-ctx.Done():
		return nil
	}
}

// Close stops accepting requests, lets those in flight finish (up to the
// deadline of ctx), stops the loops and closes the store.
func (s *Server) Close(ctx context.Context) error {
	if s.PowerWorker != nil {
		s.PowerWorker.Close() // commands in flight report through the API first
	}
	s.cancel()
	var err error
	for _, hs := range s.servers {
		if serr := hs.Shutdown(ctx); err == nil {
			err = serr
		}
	}
	s.loops.Wait() // power commands in flight finish and report first
	if s.Rack != nil {
		_ = s.Rack.Close()
	}
	if cerr := s.Store.Close(); err == nil {
		err = cerr
	}
	if lerr := s.lock.Release(); err == nil {
		err = lerr
	}
	return err
}

// RackSecret issues a one-time secret a rack enrols with, valid for
// life, granting that rack bmcNetworks. Like APIKey it opens the store
// directly.
func RackSecret(ctx context.Context, dataDir, dbURL string, life time.Duration, bmcNetworks ...string) (string, time.Time, error) {
	st, err := OpenStore(ctx, dataDir, dbURL)
	if err != nil {
		return "", time.Time{}, err
	}
	defer st.Close()
	expires := time.Now().Add(life).UTC()
	secret, err := st.CreateRackSecret(ctx, "anvil rack secret", expires, bmcNetworks...)
	if err != nil {
		return "", time.Time{}, err
	}
	return secret, expires, nil
}

// APIKey returns a new key for username, creating it as an admin first if
// it does not exist. It opens the store directly, so it works beside a
// running server.
func APIKey(ctx context.Context, dataDir, dbURL, username string) (string, error) {
	st, err := OpenStore(ctx, dataDir, dbURL)
	if err != nil {
		return "", err
	}
	defer st.Close()
	if _, err := st.EnsureUser(ctx, username, true); err != nil {
		return "", fmt.Errorf("user %s: %w", username, err)
	}
	tok, err := st.CreateToken(ctx, username)
	if err != nil {
		return "", fmt.Errorf("token for %s: %w", username, err)
	}
	return tok.APIKey(), nil
}

// SetPassword sets the web UI password of a user, creating the user (as an
// admin when admin is true) if needed. Existing sessions of the user end.
func SetPassword(ctx context.Context, dataDir, dbURL, username, pw string, admin bool) error {
	hash, err := password.Hash(pw)
	if err != nil {
		return err
	}
	st, err := OpenStore(ctx, dataDir, dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.EnsureUser(ctx, username, admin); err != nil {
		return fmt.Errorf("user %s: %w", username, err)
	}
	return st.SetPassword(ctx, username, hash)
}

// advertiseURL is the base URL other regions reach this one at, from the
// listener: the host name stands in for an unspecified address.
func advertiseURL(a net.Addr) string {
	host, port, _ := net.SplitHostPort(a.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		} else {
			host = "localhost"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/MAAS/"
}

// announce records this region in the store now and every minute, so
// that other regions sharing the database can fetch image bytes from it.
func (s *Server) announce(ctx context.Context, self string, log *slog.Logger) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		if err := s.Store.TouchRegion(ctx, self); err != nil && ctx.Err() == nil {
			log.Warn("record this region", "url", self, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// retention fills r's zero fields from the defaults; a negative one turns
// that limit off.
func retention(r store.Retention) store.Retention {
	d := region.DefaultRetention
	age := func(v, def time.Duration) time.Duration {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	r.EventAge, r.DiscoveryAge = age(r.EventAge, d.EventAge), age(r.DiscoveryAge, d.DiscoveryAge)
	switch {
	case r.MaxDiscoveries == 0:
		r.MaxDiscoveries = d.MaxDiscoveries
	case r.MaxDiscoveries < 0:
		r.MaxDiscoveries = 0
	}
	return r
}
