package bench

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// XferResult is the throughput of one client against one server, in
// MB/s (10^6 bytes) of the file's size over the client's wall time.
type XferResult struct {
	Proto, Client, Server string
	Runs                  []float64
	Err                   string
}

// Median of the runs, 0 if there were none.
func (x XferResult) Median() float64 { return median(x.Runs) }

// RPSResult is small-file requests per second against one server.
type RPSResult struct {
	Server string
	Runs   []float64
	Errors int
	Err    string
}

// Median of the runs, 0 if there were none.
func (r RPSResult) Median() float64 { return median(r.Runs) }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// xferCase is one client command line against one server.
type xferCase struct {
	res  *XferResult
	args []string
	// check reads the client's stdout; nil means the exit status suffices.
	check func(out string) error
}

func xferCases(size int64) []*xferCase {
	var cs []*xferCase
	add := func(proto, client, server string, check func(string) error, args ...string) {
		cs = append(cs, &xferCase{res: &XferResult{Proto: proto, Client: client, Server: server}, args: args, check: check})
	}
	// Allow at least 1 MB/s, and two minutes for small files.
	limit := strconv.FormatInt(max(120, size/1e6), 10)
	sized := func(out string) error {
		if n, _ := strconv.ParseInt(strings.TrimSpace(out), 10, 64); n != size {
			return fmt.Errorf("got %q bytes, want %d", out, size)
		}
		return nil
	}
	tftp := []struct {
		name string
		port int
	}{{"anvil", anvilTFTPPort}, {"tftpd-hpa", hpaTFTPPort}}
	for _, bs := range []string{"512", "1468"} {
		for _, s := range tftp {
			add("tftp", "curl, blksize "+bs, s.name, sized, "curl", "-sS", "--max-time", limit, "-o", "/dev/null",
				"-w", "%{size_download}", "--tftp-blksize", bs, fmt.Sprintf("tftp://%s:%d/%s", nbServerIP, s.port, bigFile))
		}
	}
	// atftp asks for windowsize too, so a server that grants it shows the
	// gain here. 512-byte blocks are left to curl: lock-step at 512 is
	// the same for both clients and the slowest part of the run.
	// atftp's exit status is non-zero when a transfer fails.
	for _, s := range tftp {
		add("tftp", "atftp, blksize 1468, windowsize 16 asked", s.name, nil, "atftp", "-g", "-r", bigFile, "-l", "/dev/null",
			"--option", "blksize 1468", "--option", "windowsize 16", nbServerIP, strconv.Itoa(s.port))
	}
	for _, s := range []struct {
		name string
		port int
	}{{"anvil", anvilHTTPPort}, {"nginx", nginxHTTPPort}} {
		add("http", "curl", s.name, sized, "curl", "-sS", "--max-time", limit, "-o", "/dev/null",
			"-w", "%{size_download}", fmt.Sprintf("http://%s:%d/%s", nbServerIP, s.port, bigFile))
	}
	return cs
}

// runXfers runs every case reps times, alternating servers within each
// round so that noise from the shared machine falls on all of them.
// Cases whose client is not installed, or that failed once, are skipped.
func runXfers(ctx context.Context, cfg NetbootConfig, tp *nbTopo, cs []*xferCase, size int64) []XferResult {
	for rep := range cfg.Reps {
		for _, c := range cs {
			if c.res.Err != "" || ctx.Err() != nil {
				continue
			}
			if _, err := exec.LookPath(c.args[0]); err != nil {
				c.res.Err = c.args[0] + " not installed"
				continue
			}
			fmt.Fprintf(cfg.Out, "%s: %s from %s, run %d\n", c.res.Proto, c.res.Client, c.res.Server, rep+1)
			// A stalled atftp retries forever: bound it as curl is.
			tctx, cancel := context.WithTimeout(ctx, max(2*time.Minute, time.Duration(size/1e6)*time.Second)+30*time.Second)
			t0 := time.Now()
			out, err := nsCmd(tctx, tp.cliNS, c.args...).Output()
			secs := time.Since(t0).Seconds()
			cancel()
			if err == nil && c.check != nil {
				err = c.check(string(out))
			}
			if err != nil {
				if ee, ok := err.(*exec.ExitError); ok {
					err = fmt.Errorf("%v: %s", err, lastLines(string(ee.Stderr), 2))
				}
				c.res.Err = err.Error()
				fmt.Fprintf(cfg.Out, "  failed: %v\n", err)
				continue
			}
			c.res.Runs = append(c.res.Runs, float64(size)/secs/1e6)
		}
	}
	out := make([]XferResult, len(cs))
	for i, c := range cs {
		out[i] = *c.res
	}
	return out
}

// runRPS measures small-file GETs per second against each HTTP server:
// `anvil bench netboot http-load` (HTTPLoad) in the client namespace,
// a separate process so Anvil's in-process server does not share a Go
// runtime with its load.
func runRPS(ctx context.Context, cfg NetbootConfig, tp *nbTopo, nginxErr error) []RPSResult {
	rs := []RPSResult{{Server: "anvil"}, {Server: "nginx"}}
	if nginxErr != nil {
		rs[1].Err = nginxErr.Error()
	}
	ports := []int{anvilHTTPPort, nginxHTTPPort}
	for rep := range cfg.Reps {
		for i := range rs {
			r := &rs[i]
			if r.Err != "" || ctx.Err() != nil {
				continue
			}
			fmt.Fprintf(cfg.Out, "http: 1 KiB GETs from %s, run %d\n", r.Server, rep+1)
			url := fmt.Sprintf("http://%s:%d/%s", nbServerIP, ports[i], smallFile)
			tctx, cancel := context.WithTimeout(ctx, cfg.LoadTime+30*time.Second)
			out, err := nsCmd(tctx, tp.cliNS, cfg.Binary, "bench", "netboot", "http-load", "--url", url,
				"--duration", cfg.LoadTime.String(), "--concurrency", strconv.Itoa(cfg.LoadConns)).Output()
			cancel()
			var ok, failed int
			if err == nil {
				_, err = fmt.Sscan(string(out), &ok, &failed)
			}
			if err != nil {
				r.Err = fmt.Sprintf("http-load: %v", err)
				continue
			}
			r.Errors += failed
			r.Runs = append(r.Runs, float64(ok)/cfg.LoadTime.Seconds())
		}
	}
	return rs
}
