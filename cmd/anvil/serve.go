package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/dns"
	"github.com/anvilmetal/anvil/internal/httpserve"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
)

// storeFlags are shared by every command that opens the database.
type storeFlags struct {
	data string
	db   string
}

func (f *storeFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.data, "data", "./anvil-data", "directory for the embedded database, the secret key and everything else Anvil keeps")
	c.Flags().StringVar(&f.db, "db", os.Getenv("ANVIL_DB"), "database URL: empty for embedded SQLite in --data, or postgres://user:pass@host/db")
}

func serveCmd() *cobra.Command {
	var (
		sf      storeFlags
		listen  string
		timeout time.Duration
		level   string
		poll    time.Duration
		workers int
		bmcNets []netip.Prefix
		remote  bool
		tftp    string
		bhttp   string
		dnsL    string
		bootURL string
		enlistC bool
		bmcUser string
		advert  string
		dhcpIf  string
		dhcpPx  bool
		noRA    bool
		grace   time.Duration
		pprofL  string
		lease   time.Duration
		live    time.Duration
		limits  httpserve.Limits
		dnsLim  dns.Limits
		keep    store.Retention
		tlsCfg  serve.TLSConfig
	)
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run region and rack in one process",
		RunE: func(c *cobra.Command, _ []string) error {
			var lv slog.Level
			if err := lv.UnmarshalText([]byte(level)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			if err := checkPowerTimes(lease, live); err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			t0 := time.Now()
			if err := servePprof(pprofL, log); err != nil {
				return fmt.Errorf("--pprof-listen: %w", err)
			}
			srv, err := serve.Start(ctx, serve.Config{
				DataDir: sf.data, DBURL: sf.db, Listen: listen, StatusTimeout: timeout, Log: log,
				Monitor: region.MonitorConfig{Interval: poll}, EnlistCommission: enlistC, EnlistBMCUser: bmcUser, AdvertiseURL: advert,
				DHCPInterface: dhcpIf, DHCPProxy: dhcpPx, NoRAReply: noRA, DriftGrace: grace,
				Power:    power.Config{Workers: workers, Lease: lease, RackLive: live},
				TFTPAddr: tftp, BootHTTPAddr: bhttp, BootHTTPURL: bootURL, DNSAddr: dnsL, DNSLimits: dnsLim,
				HTTP: limits, TLS: tlsCfg, Retention: keep,
				RackPower: serve.RackPower{Remote: remote, BMCNetworks: bmcNets},
			})
			if err != nil {
				return err
			}
			log.Info("Anvil is ready", "api", apiURL(srv.Addr), "database", dbName(sf), "startup", time.Since(t0).Round(time.Millisecond))
			if srv.Rack != nil && srv.Rack.Source.HTTPBase != "" {
				log.Info("machines boot from", "boot_url", srv.Rack.Source.HTTPBase, "metadata_url", srv.Rack.Source.MetadataURL)
			}
			if srv.TLSAddr != nil {
				log.Info("HTTPS", "api", "https://"+strings.TrimPrefix(apiURL(srv.TLSAddr), "http://"), "plain", "metadata, image downloads and this host only")
			}
			fmt.Fprintf(os.Stderr, "\nGet an API key with:\n  anvil apikey --username admin --data %s%s\nthen log in with:\n  anvil login admin %s <key>\n"+
				"For the web pages at %s, set a password with:\n  anvil passwd --username admin --data %s%s\n\n",
				sf.data, dbFlag(sf), apiURL(srv.Addr), apiURL(srv.Addr), sf.data, dbFlag(sf))
			werr := srv.Wait(ctx)
			log.Info("shutting down")
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := srv.Close(sctx); err != nil && werr == nil {
				werr = err
			}
			return werr
		},
	}
	sf.register(c)
	c.Flags().StringVar(&listen, "listen", ":5240", "address for the API, UI and metadata")
	c.Flags().DurationVar(&timeout, "status-timeout", 30*time.Minute, "how long a monitored status (commissioning, deploying, ...) may go without progress before it fails")
	c.Flags().StringVar(&level, "log-level", "info", "debug, info, warn or error")
	c.Flags().DurationVar(&poll, "power-poll-interval", 5*time.Minute, "how often the power monitor queries each machine's BMC (spread evenly over the interval)")
	c.Flags().StringVar(&tftp, "tftp-listen", ":69", "TFTP address of the rack in this process (empty: no TFTP)")
	c.Flags().StringVar(&dnsL, "dns-listen", ":53", "DNS address (UDP and TCP) of the rack in this process (empty: no DNS)")
	c.Flags().StringVar(&bhttp, "boot-http-listen", ":5248", "HTTP boot address of the rack in this process (empty: no HTTP boot)")
	c.Flags().StringVar(&bootURL, "boot-http-url", "", "the boot HTTP server as machines reach it, e.g. http://192.0.2.1:5248 (default: --boot-http-listen's address, or for one on every address this host's address on --dhcp-interface); the metadata API is reached at its host on --listen's port")
	c.Flags().StringVar(&dhcpIf, "dhcp-interface", "", "serve DHCP on this interface for the subnets with dhcp_on (empty: no DHCP)")
	c.Flags().BoolVar(&dhcpPx, "dhcp-proxy", false, "proxyDHCP: answer PXE clients with boot information only, no addresses")
	c.Flags().DurationVar(&grace, "drift-grace", 2*time.Minute, "after a power action, how long a BMC reading that disagrees with it is not yet power drift")
	c.Flags().BoolVar(&noRA, "no-ipv6-ra-reply", false, "with full DHCP, do not answer IPv6 router solicitations (the answer offers nothing and spares iPXE a 16 s wait)")
	c.Flags().StringVar(&advert, "advertise-url", "", "this region's base URL as other regions sharing the database reach it, e.g. http://10.0.0.2:5240/MAAS/ (default: from --listen, with the host name for an unspecified address); regions fetch image bytes they lack from each other")
	c.Flags().StringVar(&bmcUser, "enlist-bmc-user", "anvil", "IPMI user an enlisting machine creates on its BMC, in-band with a fresh password, so Anvil manages its power at once (empty: leave BMCs alone)")
	c.Flags().BoolVar(&enlistC, "enlist-commission", false, "send machines that enlist straight on to commissioning instead of powering them off NEW")
	c.Flags().Var(bmcNetworksFlag{&bmcNets}, "bmc-network", "a network (CIDR) whose BMCs the rack in this process reaches, with its interfaces' subnets; repeatable (default: every BMC)")
	c.Flags().BoolVar(&remote, "remote-power", false, "run no power commands in this process: racks elsewhere claim them all")
	c.Flags().IntVar(&workers, "power-workers", 16, "BMC commands (actions and polls) this process runs at once; one BMC never gets two at once")
	httpFlags(c, &limits)
	dnsFlags(c, &dnsLim)
	c.Flags().DurationVar(&keep.EventAge, "event-retention", region.DefaultRetention.EventAge, "how long events are kept (-1s: for ever)")
	c.Flags().DurationVar(&keep.DiscoveryAge, "discovery-retention", region.DefaultRetention.DiscoveryAge, "how long a discovery (an unknown MAC that asked for a boot or an address) is kept after it was last seen (-1s: for ever)")
	c.Flags().IntVar(&keep.MaxDiscoveries, "max-discoveries", region.DefaultRetention.MaxDiscoveries, "discoveries kept at most, the most recently seen (-1: no limit)")
	c.Flags().StringVar(&tlsCfg.CertFile, "tls-cert", "", "PEM certificate (chain) for HTTPS; with --tls-key, the API and pages are served over HTTPS on --tls-listen")
	c.Flags().StringVar(&tlsCfg.KeyFile, "tls-key", "", "PEM private key of --tls-cert")
	c.Flags().StringVar(&tlsCfg.Listen, "tls-listen", ":5443", "HTTPS address for the API and pages when --tls-cert is given")
	c.Flags().StringVar(&pprofL, "pprof-listen", "", "serve Go's profiler (/debug/pprof/) on this address, e.g. 127.0.0.1:6060 (empty: off; it has no authentication)")
	// How soon work moves away from a dead region or rack. The defaults
	// suit a site; tests of failover shorten them so that a takeover
	// takes seconds, hence hidden.
	c.Flags().DurationVar(&lease, "power-lease", 0, "how long a claimed power command stays its region's or rack's without renewal (default 30s)")
	c.Flags().DurationVar(&live, "rack-live", 0, "how long a rack counts as live after it last asked for power work (default 45s)")
	_ = c.Flags().MarkHidden("power-lease")
	_ = c.Flags().MarkHidden("rack-live")
	return c
}

// checkPowerTimes refuses a lease or liveness window too short to renew
// within: a rack renews a lease every third of it, and notes itself
// live every quarter of the window while it waits for work.
func checkPowerTimes(lease, live time.Duration) error {
	switch {
	case lease < 0 || lease != 0 && lease < time.Second:
		return fmt.Errorf("--power-lease must be at least 1s, not %s", lease)
	case live < 0 || live != 0 && live < 2*time.Second:
		return fmt.Errorf("--rack-live must be at least 2s, not %s", live)
	}
	return nil
}

func apikeyCmd() *cobra.Command {
	var (
		sf       storeFlags
		username string
	)
	c := &cobra.Command{
		Use:   "apikey",
		Short: "Print a new API key (consumer:token:secret) for a user, creating it as an admin if needed",
		RunE: func(c *cobra.Command, _ []string) error {
			if username == "" {
				return fmt.Errorf("--username is required")
			}
			key, err := serve.APIKey(c.Context(), sf.data, sf.db, username)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), key)
			return nil
		},
	}
	sf.register(c)
	c.Flags().StringVar(&username, "username", "", "the user the key is for")
	return c
}

func apiURL(a net.Addr) string {
	host, port, _ := net.SplitHostPort(a.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/MAAS/"
}

func dbName(sf storeFlags) string {
	if sf.db == "" {
		return "sqlite in " + sf.data
	}
	return "postgresql"
}

func dbFlag(sf storeFlags) string {
	if sf.db == "" {
		return ""
	}
	return " --db '<same URL>'"
}

// dnsFlags are the limits on DNS clients, shared by serve and rack.
func dnsFlags(c *cobra.Command, l *dns.Limits) {
	d := dns.Defaults
	c.Flags().IntVar(&l.RRLRate, "dns-rrl-rate", d.RRLRate, "UDP answers per second to one client /24 (IPv4) or /56 (IPv6); beyond it answers are dropped or truncated (-1: no limit)")
	c.Flags().IntVar(&l.RRLSlip, "dns-rrl-slip", d.RRLSlip, "of the answers over --dns-rrl-rate, every Nth is sent empty and truncated so real clients retry over TCP, the rest dropped (-1: drop all)")
	c.Flags().IntVar(&l.TCPConns, "dns-tcp-max-conns", d.TCPConns, "DNS TCP connections open at once (-1: no limit)")
	c.Flags().IntVar(&l.TCPConnsPerAddress, "dns-tcp-max-conns-per-address", d.TCPConnsPerAddress, "DNS TCP connections one source address may hold open at once (-1: no limit)")
	c.Flags().IntVar(&l.Forwards, "dns-max-forwards", d.Forwards, "queries forwarded to upstream_dns at once; beyond it SERVFAIL (-1: no limit)")
	c.Flags().IntVar(&l.ForwardsPerPrefix, "dns-max-forwards-per-client", d.ForwardsPerPrefix, "queries forwarded at once for one client /24 (IPv4) or /56 (IPv6) (-1: no limit)")
}

// httpFlags are the limits on HTTP clients, shared by serve and rack.
func httpFlags(c *cobra.Command, l *httpserve.Limits) {
	d := httpserve.Defaults
	c.Flags().DurationVar(&l.Read, "http-read-timeout", d.Read, "how long a client has to send a whole request (uploads get this much per read instead)")
	c.Flags().DurationVar(&l.Write, "http-write-timeout", d.Write, "how long an answer may take once its request is read (streams and downloads get this much per write instead)")
	c.Flags().DurationVar(&l.Idle, "http-idle-timeout", d.Idle, "how long a keep-alive connection may wait for its next request")
	c.Flags().IntVar(&l.PerAddress, "max-conns-per-address", d.PerAddress, "HTTP connections one source address may hold open at once (-1: no limit)")
	c.Flags().IntVar(&l.Total, "max-conns", d.Total, "HTTP connections all clients may hold open at once, per server; loopback has 64 more (-1: no limit)")
}
