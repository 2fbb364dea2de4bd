package main

import (
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/powerroute"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
)

// bmcNetworksFlag is a repeatable --bmc-network CIDR.
type bmcNetworksFlag struct{ nets *[]netip.Prefix }

func (f bmcNetworksFlag) String() string {
	if f.nets == nil {
		return ""
	}
	return strings.Join(powerroute.Strings(*f.nets), ",")
}

func (f bmcNetworksFlag) Set(v string) error {
	p, err := powerroute.ParseNetworks(strings.Split(v, ","))
	if err != nil {
		return err
	}
	*f.nets = append(*f.nets, p...)
	return nil
}

func (bmcNetworksFlag) Type() string { return "CIDR" }

func rackCmd() *cobra.Command {
	var (
		cfg     rack.Config
		nets    []netip.Prefix
		workers int
	)
	c := &cobra.Command{
		Use:   "rack",
		Short: "Run a rack: TFTP and HTTP boot answered from a local cache the region keeps up to date",
		RunE: func(c *cobra.Command, _ []string) error {
			if cfg.RegionURL == "" {
				return fmt.Errorf("--region is required")
			}
			cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
			cfg.Version = serve.Version
			cfg.Power = &rack.PowerConfig{Networks: nets, InterfaceNetworks: true, Drivers: serve.Drivers(), Concurrency: workers, Log: cfg.Log}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			r, err := rack.Start(ctx, cfg)
			if err != nil {
				return err
			}
			cfg.Log.Info("rack ready", "tftp", r.TFTP, "http", r.HTTP, "dns", r.DNS, "boot_url", r.Source.HTTPBase, "region", cfg.RegionURL, "cached_machines", r.Cache.Len())
			<-ctx.Done()
			return r.Close()
		},
	}
	f := c.Flags()
	f.StringVar(&cfg.RegionURL, "region", "", "the region's URL, http://host:5240/MAAS/; several regions sharing one database separated by commas (the rack moves to the next when one cannot be reached)")
	f.StringVar(&cfg.RegionCA, "ca-file", "", "PEM certificate(s) to trust for an https --region, e.g. the region's self-signed certificate")
	f.StringVar(&cfg.EnrolSecret, "enrol-secret", os.Getenv("ANVIL_RACK_ENROL_SECRET"),
		"one-time secret to enrol with, from anvil rack secret on the region (or $ANVIL_RACK_ENROL_SECRET); used once, when the rack has no credential in --data")
	f.StringVar(&cfg.APIKey, "key", os.Getenv("ANVIL_RACK_KEY"), "an administrator's API key, for a rack that has not enrolled (or $ANVIL_RACK_KEY)")
	f.StringVar(&cfg.Hostname, "hostname", "", "the name the rack enrols and reports under (default: this host's)")
	f.StringVar(&cfg.DataDir, "data", "./anvil-rack", "directory for boot files (boot/) and the boot cache")
	f.StringVar(&cfg.TFTPAddr, "tftp-listen", ":69", "TFTP address (empty: off)")
	f.StringVar(&cfg.DNSAddr, "dns-listen", ":53", "DNS address, UDP and TCP (empty: off)")
	// A site's own signed zones (or a test's) in place of the root's key.
	f.StringArrayVar(&cfg.DNSTrustAnchors, "dns-trust-anchor", nil, "DS or DNSKEY record trusted for DNSSEC validation instead of the root's (repeatable)")
	_ = f.MarkHidden("dns-trust-anchor")
	f.StringVar(&cfg.HTTPAddr, "boot-http-listen", ":5248", "HTTP boot address (empty: off)")
	f.StringVar(&cfg.HTTPBase, "boot-http-url", "", "the boot HTTP server as machines reach it, e.g. http://192.0.2.1:5248 (default: --boot-http-listen's address, or for one on every address this host's address on --dhcp-interface)")
	f.StringVar(&cfg.MetadataURL, "metadata-url", "", "the region's metadata API as machines reach it (default: from --region)")
	f.StringVar(&cfg.DHCPInterface, "dhcp-interface", "", "serve DHCP on this interface for the subnets with dhcp_on (empty: no DHCP)")
	f.BoolVar(&cfg.DHCPProxy, "dhcp-proxy", false, "proxyDHCP: answer PXE clients with boot information only, no addresses")
	f.BoolVar(&cfg.NoRAReply, "no-ipv6-ra-reply", false, "with full DHCP, do not answer IPv6 router solicitations (the answer offers nothing and spares iPXE a 16 s wait)")
	f.Var(bmcNetworksFlag{&nets}, "bmc-network", "a network (CIDR) whose BMCs this rack reaches, besides its interfaces' subnets; repeatable")
	f.IntVar(&workers, "power-workers", 8, "BMC commands this rack runs at once")
	httpFlags(c, &cfg.HTTPLimits)
	dnsFlags(c, &cfg.DNSLimits)
	c.AddCommand(rackSecretCmd())
	return c
}

func rackSecretCmd() *cobra.Command {
	var (
		sf   storeFlags
		life time.Duration
		nets []netip.Prefix
	)
	c := &cobra.Command{
		Use:   "secret",
		Short: "Print a one-time secret a rack enrols with (anvil rack --enrol-secret); run on the region",
		RunE: func(c *cobra.Command, _ []string) error {
			if life < time.Minute || life > 7*24*time.Hour {
				return fmt.Errorf("--expires must be from 1m to 168h")
			}
			secret, expires, err := serve.RackSecret(c.Context(), sf.data, sf.db, life, powerroute.Strings(nets)...)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), secret)
			fmt.Fprintln(c.ErrOrStderr(), "valid once, until", expires.Format(time.RFC3339))
			return nil
		},
	}
	sf.register(c)
	c.Flags().DurationVar(&life, "expires", time.Hour, "how long the secret may be used")
	c.Flags().Var(bmcNetworksFlag{&nets}, "bmc-network", "a network (CIDR) whose BMCs the rack enrolling with the secret may power, besides the subnets it serves; repeatable")
	return c
}
