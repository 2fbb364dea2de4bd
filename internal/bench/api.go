// Package bench measures Anvil the way an operator would see it: a real
// `anvil serve` process, driven over HTTP, with its peak memory read from
// the kernel. `anvil bench api` runs it.
package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// APIConfig says what to measure.
type APIConfig struct {
	Binary   string // the anvil binary to run as the server
	DBURL    string // "" for SQLite
	Machines int
	Samples  int // requests per latency figure
	Workers  int // concurrent creators while filling the store
	Out      io.Writer
}

// APIResult holds the figures of one run.
type APIResult struct {
	Database        string
	Machines        int
	CreatePerSecond float64
	ListAll         Latency
	ListFiltered    Latency
	Read            Latency
	PeakRSSMiB      float64
	StartupSeconds  float64
}

// Latency summarises samples.
type Latency struct{ P50, P99, Max time.Duration }

func summarise(d []time.Duration) Latency {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) time.Duration { return d[int(q*float64(len(d)-1))] }
	return Latency{P50: at(0.5), P99: at(0.99), Max: d[len(d)-1]}
}

// RunAPI starts a server on an empty data directory, fills it with
// machines through the API, and measures reads.
func RunAPI(ctx context.Context, cfg APIConfig) (APIResult, error) {
	res := APIResult{Database: "sqlite", Machines: cfg.Machines}
	if cfg.DBURL != "" {
		// A database of its own, so that runs never see each other's rows.
		res.Database = "postgresql"
		u, drop, err := pgtest.Create(ctx, cfg.DBURL)
		if err != nil {
			return res, err
		}
		defer drop()
		cfg.DBURL = u
	}
	dir, err := os.MkdirTemp("", "anvil-bench-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	port, err := freePort()
	if err != nil {
		return res, err
	}
	args := []string{"serve", "--data", dir, "--listen", "127.0.0.1:" + port, "--log-level", "warn"}
	if cfg.DBURL != "" {
		args = append(args, "--db", cfg.DBURL)
	}
	t0 := time.Now()
	srv := exec.CommandContext(ctx, cfg.Binary, args...)
	var stderr strings.Builder
	srv.Stderr = &lockedWriter{w: &stderr}
	if err := srv.Start(); err != nil {
		return res, fmt.Errorf("start server: %w", err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	base := "http://127.0.0.1:" + port + "/MAAS/api/2.0/"
	if err := waitUp(ctx, "http://127.0.0.1:"+port+"/healthz"); err != nil {
		return res, fmt.Errorf("%w; server said: %s", err, stderr.String())
	}
	res.StartupSeconds = time.Since(t0).Seconds()
	keyArgs := []string{"apikey", "--username", "bench", "--data", dir}
	if cfg.DBURL != "" {
		keyArgs = append(keyArgs, "--db", cfg.DBURL)
	}
	out, err := exec.CommandContext(ctx, cfg.Binary, keyArgs...).Output()
	if err != nil {
		return res, fmt.Errorf("apikey: %w", err)
	}
	c := &caller{base: base, auth: authHeader(strings.TrimSpace(string(out))), http: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Workers + 4},
	}}

	fmt.Fprintf(cfg.Out, "filling %s with %d machines...\n", res.Database, cfg.Machines)
	start := time.Now()
	if err := fill(ctx, c, cfg.Machines, cfg.Workers); err != nil {
		return res, err
	}
	res.CreatePerSecond = float64(cfg.Machines) / time.Since(start).Seconds()

	var err2 error
	measure := func(n int, path string) Latency {
		var d []time.Duration
		for i := 0; i < n && err2 == nil; i++ {
			t := time.Now()
			if _, err := c.get(ctx, path); err != nil {
				err2 = err
			}
			d = append(d, time.Since(t))
		}
		return summarise(d)
	}
	all := max(cfg.Samples/10, 10)
	res.ListAll = measure(all, "machines/")
	res.ListFiltered = measure(cfg.Samples, "machines/?hostname=bench-"+strconv.Itoa(cfg.Machines/2))
	ids, err := c.get(ctx, "machines/?hostname=bench-1")
	if err != nil {
		return res, err
	}
	id := between(string(ids), `"system_id":"`, `"`)
	res.Read = measure(cfg.Samples, "machines/"+id+"/")
	if err2 != nil {
		return res, err2
	}
	res.PeakRSSMiB, err = peakRSS(srv.Process.Pid)
	return res, err
}

func fill(ctx context.Context, c *caller, n, workers int) error {
	_, err := createMachines(ctx, c, n, workers, func(i int) url.Values {
		return url.Values{
			"hostname":      {fmt.Sprintf("bench-%d", i)},
			"mac_addresses": {fmt.Sprintf("02:00:%02x:%02x:%02x:%02x", byte(i>>24), byte(i>>16), byte(i>>8), byte(i))},
			"architecture":  {"amd64/generic"},
		}
	})
	return err
}

// createMachines POSTs form(i) for i in [0, n) from workers clients and
// returns the system_id of each, by i; it stops at the first error.
func createMachines(ctx context.Context, c *caller, n, workers int, form func(i int) url.Values) ([]string, error) {
	ids := make([]string, n)
	jobs := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				b, err := c.postBody(ctx, "machines/", form(i))
				if err != nil {
					errs <- err
					return
				}
				ids[i] = between(string(b), `"system_id":"`, `"`)
			}
		}()
	}
	var err error
	for i := 0; i < n && err == nil; i++ {
		select {
		case jobs <- i:
		case err = <-errs:
		}
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return ids, err
}

type caller struct {
	base, auth string
	http       *http.Client
}

func (c *caller) get(ctx context.Context, path string) ([]byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	return c.do(req)
}

func (c *caller) post(ctx context.Context, path string, f url.Values) error {
	_, err := c.postBody(ctx, path, f)
	return err
}

func (c *caller) postBody(ctx context.Context, path string, f url.Values) ([]byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

func (c *caller) do(req *http.Request) ([]byte, error) {
	req.Header.Set("Authorization", c.auth)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	return b, err
}

func authHeader(key string) string {
	p := strings.SplitN(key, ":", 3)
	if len(p) != 3 {
		return ""
	}
	return fmt.Sprintf(`OAuth oauth_version="1.0", oauth_signature_method="PLAINTEXT", oauth_consumer_key=%q, oauth_token=%q, oauth_signature="&%s", oauth_nonce="b", oauth_timestamp="%d"`,
		p[0], p[1], p[2], time.Now().Unix())
}

func waitUp(ctx context.Context, u string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("server did not come up at %s", u)
}

// lockedWriter lets exec's copier goroutine write while we read at the end.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p, nil
}

// peakRSS reads the process's high-water resident set (VmHWM).
func peakRSS(pid int) (float64, error) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM for pid %d", pid)
}

func between(s, a, b string) string {
	_, rest, ok := strings.Cut(s, a)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, b)
	return v
}

// Markdown renders results as a table for BENCHMARKS.md.
func Markdown(rs []APIResult) string {
	var b strings.Builder
	b.WriteString("| database | machines | create/s | list all p50 | list all p99 | filtered p50 | filtered p99 | read p50 | read p99 | peak RSS | startup |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %d | %.0f | %s | %s | %s | %s | %s | %s | %.0f MiB | %.2f s |\n",
			r.Database, r.Machines, r.CreatePerSecond, ms(r.ListAll.P50), ms(r.ListAll.P99),
			ms(r.ListFiltered.P50), ms(r.ListFiltered.P99), ms(r.Read.P50), ms(r.Read.P99), r.PeakRSSMiB, r.StartupSeconds)
	}
	return b.String()
}
