package rack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/anvilmetal/anvil/internal/boot"
	"github.com/anvilmetal/anvil/internal/boot/httpboot"
	"github.com/anvilmetal/anvil/internal/boot/tftpd"
	"github.com/anvilmetal/anvil/internal/client"
)

// Config is what a rack needs.
type Config struct {
	DataDir   string // holds boot/ (loaders, kernels, images) and the cache
	RegionURL string // http://region:5240/MAAS/
	APIKey    string
	TFTPAddr  string // "" disables TFTP
	HTTPAddr  string // "" disables HTTP boot
	// HTTPBase is the boot HTTP server as machines reach it; by default
	// http://<HTTPAddr>, which is right when HTTPAddr names an address.
	HTTPBase string
	// MetadataURL is the region's metadata API as machines reach it; by
	// default derived from RegionURL.
	MetadataURL string
	Log         *slog.Logger
	// TFTPConn and HTTPListener, when set, are used instead of listening
	// on TFTPAddr and HTTPAddr (tests open them inside a network
	// namespace).
	TFTPConn     net.PacketConn
	HTTPListener net.Listener
}

// Rack is a running rack.
type Rack struct {
	Cache    *Cache
	Reporter *Reporter
	Source   *BootSource
	TFTP     net.Addr // bound addresses, when enabled
	HTTP     net.Addr
	stop     []func()
}

// Start loads the cache from disk (so boots are answered at once, region
// or not), follows the region, and serves TFTP and HTTP boot.
func Start(ctx context.Context, cfg Config) (*Rack, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	bootDir := filepath.Join(cfg.DataDir, "boot")
	if err := os.MkdirAll(bootDir, 0o755); err != nil {
		return nil, fmt.Errorf("rack data: %w", err)
	}
	cl, err := client.New(cfg.RegionURL, cfg.APIKey)
	if err != nil {
		return nil, err
	}
	r := &Rack{Cache: NewCache(filepath.Join(cfg.DataDir, "boot-cache.json")), Reporter: NewReporter(10000)}
	if err := r.Cache.Load(); err != nil {
		cfg.Log.Warn("boot cache unreadable; starting empty", "err", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	r.stop = append(r.stop, cancel)
	go Follow(ctx, cl, r.Cache, cfg.Log, nil)
	go r.Reporter.Run(ctx, cl, cfg.Log)

	if cfg.MetadataURL == "" {
		cfg.MetadataURL = cl.BaseURL() + "metadata/"
	}
	r.Source = &BootSource{
		Cache: r.Cache, Files: boot.Dir(bootDir), Report: r.Reporter, HTTPBase: cfg.HTTPBase,
		MetadataURL: cfg.MetadataURL, Kernel: "ephemeral/vmlinuz", Initrd: "ephemeral/initrd.img",
		ExtraParams: []string{"console=ttyS0,115200", "console=tty0"},
	}
	obs := func(name string, c boot.Client, n int64, d time.Duration, err error) {
		if err != nil && !errors.Is(err, boot.ErrNotFound) {
			cfg.Log.Debug("boot file refused", "name", fmt.Sprintf("%q", name), "client", c.Addr, "err", err)
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
		t := tftpd.New(r.Source, tftpd.Options{Observer: obs})
		go func() { _ = t.Serve(pc) }()
		r.stop = append(r.stop, t.Shutdown)
	}
	if cfg.HTTPAddr != "" || cfg.HTTPListener != nil {
		ln := cfg.HTTPListener
		if ln == nil {
			if ln, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
				r.Close()
				return nil, fmt.Errorf("boot http: %w", err)
			}
		}
		r.HTTP = ln.Addr()
		if r.Source.HTTPBase == "" {
			r.Source.HTTPBase = "http://" + ln.Addr().String()
		}
		hs := &http.Server{Handler: httpboot.Handler(r.Source, obs), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		r.stop = append(r.stop, func() { _ = hs.Close() })
	}
	return r, nil
}

// Close stops serving and saves the cache.
func (r *Rack) Close() error {
	for i := len(r.stop) - 1; i >= 0; i-- {
		r.stop[i]()
	}
	r.stop = nil
	return r.Cache.Save()
}
