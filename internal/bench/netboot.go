package bench

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// NetbootConfig says what `anvil bench netboot` measures.
type NetbootConfig struct {
	Binary    string // the anvil binary, re-run as the HTTP load generator
	Rates     []int  // perfdhcp DORA exchanges per second
	Seconds   int    // perfdhcp test period per rate and server
	Clients   int    // perfdhcp simulated clients (-R)
	FileMiB   int    // size of the TFTP and HTTP download
	Reps      int    // runs per download or load figure (the median is shown)
	LoadTime  time.Duration
	LoadConns int
	Out       io.Writer // progress
}

// NetbootResult is everything one run measured.
type NetbootResult struct {
	Config   NetbootConfig
	DHCP     []DHCPRun
	Xfer     []XferResult
	RPS      []RPSResult
	Versions []string
}

const (
	bigFile   = "boot.img"
	smallFile = "small.cfg"
)

// RunNetboot builds the namespaces, then measures DHCP, TFTP and HTTP
// boot servers one after another over the same veth pair. Everything it
// starts is stopped, and the namespaces deleted, before it returns.
func RunNetboot(ctx context.Context, cfg NetbootConfig) (NetbootResult, error) {
	res := NetbootResult{Config: cfg, Versions: versions()}
	if cfg.Seconds < 1 || cfg.FileMiB < 1 || cfg.Reps < 1 || cfg.LoadConns < 1 || cfg.LoadTime <= 0 || len(cfg.Rates) == 0 {
		return res, errors.New("netboot bench: rates, seconds, file size, reps and load settings must be positive")
	}
	// More clients than addresses would measure pool exhaustion (NAKs and
	// silence), not serving.
	if cfg.Clients < 1 || cfg.Clients > 130000 {
		return res, errors.New("netboot bench: --clients must be 1..130000, the pool's size")
	}
	tp, err := newNBTopo()
	if err != nil {
		return res, err
	}
	defer tp.close()
	dir, err := os.MkdirTemp("", "anvil-netboot-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	// nginx's worker runs as nobody and must reach www through dir.
	if err := os.Chmod(dir, 0o755); err != nil {
		return res, err
	}
	www := filepath.Join(dir, "www")
	size := int64(cfg.FileMiB) << 20
	if err := writeFiles(www, size); err != nil {
		return res, err
	}

	res.DHCP = runDHCP(ctx, cfg, tp, dir)
	if err := ctx.Err(); err != nil {
		return res, err
	}

	// All four file servers at once, so runs can alternate between them.
	stopAnvilTFTP, err := startAnvilTFTP(tp, www)
	if err != nil {
		return res, err
	}
	defer stopAnvilTFTP()
	stopAnvilHTTP, err := startAnvilHTTP(tp, www)
	if err != nil {
		return res, err
	}
	defer stopAnvilHTTP()
	cs := xferCases(size)
	if hpa, err := startHPA(ctx, tp, www); err != nil {
		markFailed(cs, "tftpd-hpa", err)
	} else {
		defer hpa.stop()
	}
	ngx, ngxErr := startNginx(ctx, tp, dir, www)
	if ngxErr != nil {
		markFailed(cs, "nginx", ngxErr)
	} else {
		defer ngx.stop()
	}
	res.Xfer = runXfers(ctx, cfg, tp, cs, size)
	res.RPS = runRPS(ctx, cfg, tp, ngxErr)
	return res, ctx.Err()
}

func markFailed(cs []*xferCase, server string, err error) {
	for _, c := range cs {
		if c.res.Server == server {
			c.res.Err = err.Error()
		}
	}
}

// writeFiles makes the served tree: the big file of random bytes (so no
// layer can compress it) and a 1 KiB config-sized file. Both are read
// once here, so every server reads them from the page cache.
func writeFiles(www string, size int64) error {
	if err := os.MkdirAll(www, 0o755); err != nil {
		return err
	}
	rng := rand.NewChaCha8([32]byte{'a', 'n', 'v', 'i', 'l'})
	for name, n := range map[string]int64{bigFile: size, smallFile: 1024} {
		f, err := os.OpenFile(filepath.Join(www, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		_, err = io.CopyN(f, rng, n)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// versions names the programs compared, for the report.
func versions() []string {
	var out []string
	for _, c := range [][]string{
		{"kea-dhcp4", "kea-dhcp4", "-V"}, {"dnsmasq", "dnsmasq", "--version"}, {"perfdhcp", "perfdhcp", "-v"},
		{"tftpd-hpa", "in.tftpd", "-V"}, {"nginx", "nginx", "-v"}, {"curl", "curl", "--version"}, {"atftp", "atftp", "--version"},
	} {
		b, _ := exec.Command(c[1], c[2:]...).CombinedOutput()
		line, _, _ := strings.Cut(string(b), "\n")
		if v := versionRE.FindString(line); v != "" {
			out = append(out, c[0]+" "+v)
		}
	}
	return out
}

var versionRE = regexp.MustCompile(`\d+\.\d+(\.\d+)?`)
