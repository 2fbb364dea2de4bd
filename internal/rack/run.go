package rack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anvilmetal/anvil/internal/boot"
	"github.com/anvilmetal/anvil/internal/boot/httpboot"
	"github.com/anvilmetal/anvil/internal/boot/tftpd"
	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/datalock"
	"github.com/anvilmetal/anvil/internal/dhcp"
	"github.com/anvilmetal/anvil/internal/dns"
	"github.com/anvilmetal/anvil/internal/httpserve"
	"github.com/anvilmetal/anvil/internal/images"
	"github.com/anvilmetal/anvil/internal/ndp"
)

// Config is what a rack needs.
type Config struct {
	DataDir string // holds boot/ (loaders, kernels, images) and the cache
	// Images, for a rack in the region's process, is the region's image
	// store: images are served from it rather than copied into the
	// rack's cache (DataDir/image-cache, which is then removed).
	Images *images.Store
	// HeldDataDir says the caller holds DataDir already (the rack inside
	// anvil serve); otherwise Start holds it and refuses one another
	// process holds.
	HeldDataDir bool
	// RegionURL is the region, http://region:5240/MAAS/, or several
	// regions sharing one database separated by commas: the rack calls
	// the first, and moves to the next when one cannot be reached.
	RegionURL string
	// Version is this rack's Anvil version, told to the region (its
	// rackcontrollers/ shows it).
	Version string
	// EnrolSecret is a one-time secret to enrol with when the rack has
	// no credential in DataDir yet; APIKey (an administrator's key) is
	// used only by a rack that has not enrolled.
	EnrolSecret string
	APIKey      string
	// Hostname is the name the rack enrols and reports under, which the
	// region knows it by ("" is the host's).
	Hostname string
	// RegionCA is a PEM file of certificates to trust for an https
	// RegionURL (empty: the system's).
	RegionCA string
	TFTPAddr string // "" disables TFTP
	HTTPAddr string // "" disables HTTP boot
	// HTTPLimits bound what one client may hold of the HTTP boot server
	// (zero fields take httpserve.Defaults).
	HTTPLimits httpserve.Limits
	// HTTPBase is the boot HTTP server as machines reach it; by default
	// http://<HTTPAddr> when HTTPAddr names an address, else this rack's
	// address on DHCPInterface (see bootURL).
	HTTPBase string
	// MetadataURL is the region's metadata API as machines reach it; by
	// default the boot URL's host on MetadataPort when that is set (a
	// rack in the region's process), else derived from RegionURL.
	MetadataURL  string
	MetadataPort string
	Log          *slog.Logger
	// TFTPConn and HTTPListener, when set, are used instead of listening
	// on TFTPAddr and HTTPAddr (tests open them inside a network
	// namespace).
	TFTPConn     net.PacketConn
	HTTPListener net.Listener
	// TFTPSinglePort answers all TFTP transfers from TFTPConn
	// (tftpd.Options.SinglePort), for a TFTPConn opened in a network
	// namespace the process does not run in.
	TFTPSinglePort bool
	// DHCPInterface, when set, serves DHCP there for the subnets the
	// region marks dhcp_on; DHCPProxy answers PXE clients only, with boot
	// information and no addresses, for sites whose DHCP is not Anvil's.
	DHCPInterface string
	// DHCPBoot overrides what DHCP tells each kind of network-booting
	// client to load (empty fields take dhcp.DefaultBootFiles; IPXE
	// defaults to this rack's ipxe.cfg).
	DHCPBoot  dhcp.BootFiles
	DHCPProxy bool
	// DHCPServerIP is this rack's address on that interface (the server
	// identifier and next-server); zero takes the interface's first.
	DHCPServerIP netip.Addr
	// DHCPListen, when set, replaces ListenAndServe (tests run it inside
	// a network namespace).
	DHCPListen func(s *dhcp.Server) error
	// Holder, when set, says who holds a MAC in place of the rack's DHCP
	// leases or neighbour table (a site that knows better; tests).
	Holder Holder
	// DNSAddr is where the DNS server answers, over UDP and TCP ("" turns
	// it off).
	DNSAddr string
	// DNSConn and DNSListener, when both set, are used instead of
	// listening on DNSAddr (tests open them inside a network namespace).
	DNSConn     net.PacketConn
	DNSListener net.Listener
	// DNSLimits bound what DNS clients may draw (zero fields take
	// dns.Defaults).
	DNSLimits dns.Limits
	// DNSTrustAnchors replace the root's key for DNSSEC validation
	// (DS or DNSKEY records in zone file syntax).
	DNSTrustAnchors []string
	// NoRAReply turns off the answer to IPv6 router solicitations that
	// a rack serving full DHCP gives by default (see package ndp).
	NoRAReply bool
	// Power, when set, runs a power worker: this rack claims the power
	// requests for the BMCs it reaches (see power.go).
	Power *PowerConfig
}

// Rack is a running rack.
type Rack struct {
	Cache     *Cache
	Reporter  *Reporter
	Source    *BootSource
	TFTP      net.Addr // bound addresses, when enabled
	HTTP      net.Addr
	DNS       net.Addr // the DNS server's address, when enabled
	DNSServer *dns.Server
	DHCP      *dhcp.Server // nil unless DHCP is served
	dhcpIP    netip.Addr   // the DHCP server's address, when set
	// SystemID is the rack's id in the region once it has enrolled.
	SystemID string
	leases   dhcp.LeaseStore
	lock     *datalock.Lock
	health   health
	power    atomic.Pointer[PowerWorker]
	stop     []func()
	loops    sync.WaitGroup
}

// Start loads the cache from disk (so boots are answered at once, region
// or not), follows the region, and serves TFTP and HTTP boot.
func Start(ctx context.Context, cfg Config) (*Rack, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	var lock *datalock.Lock
	if !cfg.HeldDataDir {
		var err error
		if lock, err = datalock.Acquire(cfg.DataDir, "anvil rack"); err != nil {
			return nil, err
		}
	}
	r, err := start(ctx, cfg, lock)
	if err != nil {
		_ = lock.Release()
		return nil, err
	}
	return r, nil
}

func start(ctx context.Context, cfg Config, lock *datalock.Lock) (*Rack, error) {
	bootDir := filepath.Join(cfg.DataDir, "boot")
	if err := os.MkdirAll(bootDir, 0o755); err != nil {
		return nil, fmt.Errorf("rack data: %w", err)
	}
	creds, enrolled, err := credentials(ctx, cfg)
	if err != nil {
		return nil, err
	}
	signKey := creds.APIKey
	if enrolled {
		signKey = creds.SigningKey()
	}
	cl, err := client.NewMulti(RegionURLs(cfg.RegionURL), creds.APIKey)
	if err == nil {
		err = cl.TrustCAFile(cfg.RegionCA)
	}
	if err != nil {
		return nil, err
	}
	cl.UserAgent = RackAgent + cfg.Version
	// The HTTP boot listener is bound first: the boot URL is derived
	// from it, and a URL no machine could reach stops the start here.
	ln := cfg.HTTPListener
	if ln == nil && cfg.HTTPAddr != "" {
		if ln, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
			return nil, fmt.Errorf("boot http: %w", err)
		}
	}
	if cfg.HTTPBase, err = resolveBootURL(cfg, ln); err != nil {
		if ln != nil {
			ln.Close()
		}
		return nil, err
	}
	if cfg.MetadataURL == "" && cfg.MetadataPort != "" && cfg.HTTPBase != "" {
		u, _ := url.Parse(cfg.HTTPBase)
		cfg.MetadataURL = "http://" + net.JoinHostPort(u.Hostname(), cfg.MetadataPort) + "/MAAS/metadata/"
	}
	r := &Rack{Cache: NewCache(filepath.Join(cfg.DataDir, "boot-cache.json")), Reporter: NewReporter(10000), lock: lock, SystemID: creds.SystemID}
	if cfg.Images != nil {
		// Copies an earlier version kept of the region's own images.
		if n, _ := filepath.Glob(filepath.Join(cfg.DataDir, "image-cache", "*")); len(n) > 0 {
			cfg.Log.Info("removing the rack's copies of the region's images", "dir", filepath.Join(cfg.DataDir, "image-cache"), "files", len(n))
		}
		if err := os.RemoveAll(filepath.Join(cfg.DataDir, "image-cache")); err != nil {
			cfg.Log.Warn("image copies not removed", "err", err)
		}
	}
	if err := r.Cache.Load(); err != nil {
		cfg.Log.Warn("boot cache unreadable; starting empty", "err", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	r.stop = append(r.stop, cancel)
	// DNS first: the region is told where it answers, and DHCP tells
	// clients of it.
	if cfg.DNSAddr != "" || cfg.DNSConn != nil {
		r.startDNS(ctx, cfg)
	}
	if cfg.Hostname == "" {
		cfg.Hostname, _ = os.Hostname()
	}
	hello := map[string][]string{"hostname": {cfg.Hostname}}
	r.dhcpIP = cfg.DHCPServerIP
	for _, a := range dnsAddrs(r.DNS, cfg.DHCPServerIP, statusAddrs(hostInterfaces())) {
		hello["dns"] = append(hello["dns"], a.String())
	}
	// Close waits for these: the cache must not be written after it.
	r.loops.Add(2)
	go func() { defer r.loops.Done(); FollowWith(ctx, cl, r.Cache, cfg.Log, nil, hello) }()
	go func() { defer r.loops.Done(); r.Reporter.Run(ctx, cl, cfg.Log) }()
	if cfg.Power != nil {
		pc := *cfg.Power
		if pc.Hostname == "" {
			pc.Hostname = cfg.Hostname
		}
		if enrolled && pc.ID == "" {
			pc.ID = PowerIDFor(creds.SystemID)
		}
		pw, err := StartPower(ctx, cl, pc)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.power.Store(pw)
		r.stop = append(r.stop, pw.Close)
	}

	if cfg.MetadataURL == "" {
		cfg.MetadataURL = cl.BaseURL() + "metadata/"
	}
	r.Source = &BootSource{
		Cache: r.Cache, Report: r.Reporter, HTTPBase: cfg.HTTPBase,
		// images/<sha256> are fetched from the region and cached.
		Files:       &ImageCache{Next: boot.Dir(bootDir), Dir: filepath.Join(cfg.DataDir, "image-cache"), Local: cfg.Images, Region: cl.BaseURL(), Log: cfg.Log},
		MetadataURL: cfg.MetadataURL, Kernel: "ephemeral/vmlinuz", Initrd: "ephemeral/initrd.img",
		// The last console is /dev/console, where the environment
		// writes: the serial line, which serial-over-LAN shows.
		ExtraParams: []string{"console=tty0", "console=ttyS0,115200"},
		Holder:      cfg.Holder,
		Key:         signKey,
		Limit:       NewConfigLimit(),
	}
	r.Reporter.Known = func(mac string) bool { _, ok := r.Cache.ByMAC(mac); return ok }
	// DHCP first among the boot services: its leases say who holds a MAC
	// before any config is served.
	if cfg.DHCPInterface != "" {
		if err := r.startDHCP(ctx, cl, cfg); err != nil {
			r.Close()
			return nil, err
		}
	}
	obs := func(name string, c boot.Client, n int64, d time.Duration, err error) {
		if err != nil && !errors.Is(err, boot.ErrNotFound) {
			cfg.Log.Debug("boot file refused", "name", fmt.Sprintf("%q", name), "client", c.Addr, "err", err)
			return
		}
		if err == nil {
			r.fileServed(name, c, n, d)
		}
	}
	if cfg.TFTPAddr != "" || cfg.TFTPConn != nil {
		pc := cfg.TFTPConn
		if pc == nil {
			if pc, err = net.ListenPacket("udp", cfg.TFTPAddr); err != nil {
				r.Close()
				return nil, fmt.Errorf("tftp: %w", err)
			}
		}
		r.TFTP = pc.LocalAddr()
		t := tftpd.New(r.Source, tftpd.Options{Observer: obs, SinglePort: cfg.TFTPSinglePort})
		r.serving(ctx, ServiceTFTP, "on "+r.TFTP.String(), func() error { return t.Serve(pc) })
		r.stop = append(r.stop, t.Shutdown)
	}
	if ln != nil {
		r.HTTP = ln.Addr()
		hs := httpserve.New(httpboot.Handler(r.Source, obs), cfg.HTTPLimits, nil)
		hs.ErrorLog = slog.NewLogLogger(cfg.Log.Handler(), slog.LevelDebug) // a client's doing, not the rack's
		r.serving(ctx, ServiceHTTP, "on "+r.HTTP.String(), func() error { return hs.Serve(cfg.HTTPLimits.Listen(ln)) })
		r.stop = append(r.stop, func() { _ = hs.Close() })
	}
	r.loops.Add(1)
	go func() { defer r.loops.Done(); r.reportStatus(ctx, cl, cfg.Log) }()
	return r, nil
}

// serving runs a service's loop, reported running until it returns
// while the rack still runs: then dead, with why.
func (r *Rack) serving(ctx context.Context, name, info string, serve func() error) {
	r.health.set(name, StatusRunning, info)
	go func() {
		err := serve()
		if ctx.Err() != nil {
			return
		}
		why := "stopped"
		if err != nil {
			why = "stopped: " + err.Error()
		}
		r.health.set(name, StatusDead, why)
	}()
}

// startDNS serves the zones the region last sent (from the cache on
// disk until it speaks), replaced whole on every change.
func (r *Rack) startDNS(ctx context.Context, cfg Config) {
	srv := dns.New(cfg.Log)
	srv.SetLimits(cfg.DNSLimits)
	if len(cfg.DNSTrustAnchors) > 0 {
		if err := srv.SetTrustAnchors(cfg.DNSTrustAnchors); err != nil {
			// validation goes on with the root's key
			cfg.Log.Error("DNS trust anchors refused", "err", err)
		}
	}
	var addr net.Addr
	var err error
	if cfg.DNSConn != nil && cfg.DNSListener != nil {
		srv.Serve(ctx, cfg.DNSConn, cfg.DNSListener)
		addr = cfg.DNSConn.LocalAddr()
	} else {
		addr, err = srv.ListenAndServe(ctx, cfg.DNSAddr)
	}
	if err != nil {
		// Boots matter more than names: a port taken (a local resolver
		// on 53) or not allowed is reported, and the rack runs on.
		cfg.Log.Error("not serving DNS", "err", err)
		r.health.set(ServiceDNS, StatusDead, "not serving: "+err.Error())
		return
	}
	r.health.set(ServiceDNS, StatusRunning, "on "+addr.String())
	r.DNS, r.DNSServer = addr, srv
	r.Cache.OnDNS(srv.Set)
}

// resolveBootURL derives the boot URL for cfg and the bound listener
// (nil without HTTP boot); a guess is logged as a warning.
func resolveBootURL(cfg Config, ln net.Listener) (string, error) {
	site := bootSite{explicit: cfg.HTTPBase, dhcpIface: cfg.DHCPInterface}
	if ln != nil {
		site.bound = ln.Addr()
	}
	switch {
	case cfg.DHCPInterface == "":
		site.hostAddrs = hostIPv4()
	case cfg.DHCPServerIP.IsValid():
		site.dhcpAddr, site.dhcpReal = cfg.DHCPServerIP, !cfg.DHCPServerIP.IsLoopback()
	default:
		a, real, err := ifaceIPv4(cfg.DHCPInterface)
		if err != nil {
			return "", err
		}
		site.dhcpAddr, site.dhcpReal = a, real
	}
	u, warn, err := bootURL(site)
	if warn != "" {
		cfg.Log.Warn(warn)
	}
	return u, err
}

// startDHCP serves DHCP with leases kept in the rack's data directory (a
// restarted rack never hands one address to two clients), reconfigured
// whenever the region's subnets change. With full DHCP the rack reports
// its leases on shared subnets and takes in the other racks' (see
// leasereport.go).
func (r *Rack) startDHCP(ctx context.Context, cl *client.Client, cfg Config) error {
	rackDNS := servesDNSAt(r.DNS, cfg.DHCPServerIP)
	leases, err := dhcp.OpenFileStore(filepath.Join(cfg.DataDir, "dhcp-leases.log"))
	if err != nil {
		return fmt.Errorf("dhcp leases: %w", err)
	}
	report := newLeaseReport(leases, r.Cache, cfg.Hostname, cfg.Log)
	boot := dhcpObserver(r.Reporter)
	srv, err := dhcp.NewServer(dhcpConfig(r.Cache.Subnets(), cfg.DHCPServerIP, r.Source.HTTPBase, cfg.DHCPBoot, cfg.DHCPProxy, rackDNS, cfg.Log), leases,
		dhcp.WithObserver(func(e dhcp.Event) { boot(e); report.note(e) }), dhcp.WithLogger(cfg.Log))
	if err != nil {
		return fmt.Errorf("dhcp: %w", err)
	}
	r.DHCP, r.leases = srv, leases
	switch {
	case r.Source.Holder != nil:
	case cfg.DHCPProxy:
		r.Source.Holder, r.Source.HeldBy = NeighbourHolder(""), NeighbourHeldBy("")
	default:
		r.Source.Holder, r.Source.HeldBy = LeaseHolder(leases, srv.PeerLeaseOf), LeaseHeldBy(leases)
	}
	r.Cache.OnSubnets(func(ss []Subnet) {
		if err := srv.Reconfigure(dhcpConfig(ss, cfg.DHCPServerIP, r.Source.HTTPBase, cfg.DHCPBoot, cfg.DHCPProxy, rackDNS, cfg.Log)); err != nil {
			cfg.Log.Error("dhcp configuration refused", "err", err)
		}
		report.poke() // a subnet may have gained or lost its role
	})
	if !cfg.DHCPProxy {
		r.Cache.OnPeerLeases(func(ls []Lease) { srv.SetPeerLeases(peerLeases(ls)) })
		r.loops.Add(1)
		go func() { defer r.loops.Done(); report.run(ctx, cl) }()
	}
	listen := cfg.DHCPListen
	if listen == nil {
		listen = func(s *dhcp.Server) error { return s.ListenAndServe(cfg.DHCPInterface) }
	}
	info := "on " + cfg.DHCPInterface
	if cfg.DHCPProxy {
		info = "proxy DHCP on " + cfg.DHCPInterface
	}
	r.health.set(ServiceDHCP, StatusRunning, info)
	go func() {
		if err := listen(srv); err != nil {
			cfg.Log.Error("dhcp stopped", "err", err)
			r.health.set(ServiceDHCP, StatusDead, "stopped: "+err.Error())
		}
	}()
	r.stop = append(r.stop, func() { _ = srv.Close() })
	if !cfg.DHCPProxy && !cfg.NoRAReply && cfg.DHCPListen == nil {
		// On Anvil's own provisioning network, end firmware's wait for
		// an IPv6 router that is not there (see package ndp). Without
		// IPv6 this only costs the firmware its wait.
		ra, err := ndp.Listen(cfg.DHCPInterface, cfg.Log)
		if err != nil {
			cfg.Log.Warn("not answering IPv6 router solicitations", "err", err)
			return nil
		}
		go func() {
			if err := ra.Serve(); err != nil {
				cfg.Log.Error("ndp stopped", "err", err)
			}
		}()
		r.stop = append(r.stop, func() { _ = ra.Close() })
	}
	return nil
}

// fileServed reports a file sent over TFTP or HTTP as a boot step of the
// machine holding the client's address, when this rack's DHCP leased it
// (without DHCP the rack cannot tell who an address is).
func (r *Rack) fileServed(name string, c boot.Client, n int64, d time.Duration) {
	if r.leases == nil || !c.Addr.IsValid() {
		return
	}
	l, ok, err := r.leases.FindByIP(context.Background(), c.Addr.Addr())
	if err != nil || !ok {
		return
	}
	r.Reporter.Add(BootEvent{MAC: l.MAC.String(), IP: c.Addr.Addr().String(), Kind: c.Proto,
		Detail: fmt.Sprintf("sent %s (%d bytes in %s)", name, n, d.Round(time.Millisecond)), At: time.Now()})
}

// Close stops serving and saves the cache.
func (r *Rack) Close() error {
	for i := len(r.stop) - 1; i >= 0; i-- {
		r.stop[i]()
	}
	r.stop = nil
	r.loops.Wait()
	err := r.Cache.Save()
	if lerr := r.lock.Release(); err == nil {
		err = lerr
	}
	return err
}
