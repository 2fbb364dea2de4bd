package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// DHCPRun is one server at one offered rate.
type DHCPRun struct {
	Server, Store string
	Rate          int // DORA exchanges per second perfdhcp was asked for
	Seconds       int
	Perf          PerfdhcpStats
	CPU           time.Duration // server CPU during the run
	ClientCPU     time.Duration // perfdhcp's CPU: the two share 2 cores
	Err           string
}

// OffersPerSec and AcksPerSec are what the clients received, over the
// test period.
func (r DHCPRun) OffersPerSec() float64 { return float64(r.Perf.DO.Received) / float64(r.Seconds) }
func (r DHCPRun) AcksPerSec() float64   { return float64(r.Perf.RA.Received) / float64(r.Seconds) }

// runDHCP loads each server in turn at each rate. Rates are the outer
// loop so background noise on the machine spreads over all servers. Each
// run gets a fresh server with an empty lease store, so earlier runs
// cannot fill its pool or warm it.
func runDHCP(ctx context.Context, cfg NetbootConfig, tp *nbTopo, dir string) []DHCPRun {
	var out []DHCPRun
	if _, err := exec.LookPath("perfdhcp"); err != nil {
		return []DHCPRun{{Server: "all", Err: "perfdhcp not installed (Debian package kea-admin)"}}
	}
	for _, rate := range cfg.Rates {
		for i, s := range dhcpServers() {
			if ctx.Err() != nil {
				return out
			}
			r := DHCPRun{Server: s.Name, Store: s.Store, Rate: rate, Seconds: cfg.Seconds}
			if s.bin != "" {
				if _, err := exec.LookPath(s.bin); err != nil {
					r.Err = s.bin + " not installed"
					out = append(out, r)
					continue
				}
			}
			fmt.Fprintf(cfg.Out, "dhcp: %s (%s) at %d/s\n", s.Name, s.Store, rate)
			runDir := fmt.Sprintf("%s/dhcp-%d-%d", dir, rate, i)
			if err := os.MkdirAll(runDir, 0o755); err != nil {
				r.Err = err.Error()
			} else if err := dhcpOnce(ctx, cfg, tp, runDir, s, &r); err != nil {
				r.Err = err.Error()
			}
			if r.Err != "" {
				fmt.Fprintf(cfg.Out, "dhcp: %s: %s\n", s.Name, r.Err)
			}
			out = append(out, r)
		}
	}
	return out
}

func dhcpOnce(ctx context.Context, cfg NetbootConfig, tp *nbTopo, dir string, s dhcpServer, r *DHCPRun) error {
	inst, err := s.start(tp, dir)
	if err != nil {
		return err
	}
	defer inst.stop()
	if err := dhcpProbe(ctx, tp, inst); err != nil {
		return fmt.Errorf("server not answering: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.Seconds)*time.Second+30*time.Second)
	defer cancel()
	cpu0 := inst.cpu()
	// -s 1: the same pseudo-random client MACs for every server.
	cmd := nsCmd(ctx, tp.cliNS, "perfdhcp", "-4", "-r", strconv.Itoa(r.Rate), "-R", strconv.Itoa(cfg.Clients),
		"-p", strconv.Itoa(cfg.Seconds), "-s", "1", "-l", tp.cliIf)
	out, err := cmd.CombinedOutput()
	r.CPU = inst.cpu() - cpu0
	if ps := cmd.ProcessState; ps != nil {
		r.ClientCPU = ps.UserTime() + ps.SystemTime()
	}
	// Exit status 3 means "some exchanges were dropped": that is a result.
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 3) {
		return fmt.Errorf("perfdhcp: %v: %s", err, lastLines(string(out), 5))
	}
	if err := inst.failed(); err != nil {
		return err
	}
	r.Perf, err = parsePerfdhcp(string(out))
	if err != nil {
		return fmt.Errorf("%w: %s", err, lastLines(string(out), 5))
	}
	return nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], " | ")
}
