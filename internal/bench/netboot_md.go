package bench

import (
	"fmt"
	"slices"
	"strings"
)

// NetbootMarkdown renders a netboot run for BENCHMARKS.md; command is the
// command line that reproduces it.
func NetbootMarkdown(r NetbootResult, command string) string {
	var b strings.Builder
	c := r.Config
	b.WriteString("## Netboot: DHCP, TFTP and HTTP boot beside Kea, dnsmasq, tftpd-hpa and nginx\n\n")
	fmt.Fprintf(&b, "Reproduce (as root):\n\n    %s\n\n", command)
	if len(r.Versions) > 0 {
		fmt.Fprintf(&b, "Versions: %s.\n\n", strings.Join(r.Versions, "; "))
	}

	fmt.Fprintf(&b, "### DHCP: perfdhcp, %d s per row, %d simulated clients, relayed (giaddr %s)\n\n", c.Seconds, c.Clients, nbClientIP)
	fmt.Fprintf(&b, "Each row is a fresh server with an empty lease store, loaded from the client namespace by `perfdhcp -4 -r RATE -R %d -p %d -s 1 -l <veth>`. ", c.Clients, c.Seconds)
	b.WriteString("offers/s and acks/s are the answers perfdhcp received over the period; CPU is in % of one core over the period.\n\n")
	b.WriteString("| target DORA/s | server | lease store | DISCOVERs sent | offers/s | acks/s | DISCOVER drops | REQUEST drops | server CPU | perfdhcp CPU |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, d := range r.DHCP {
		if d.Err != "" {
			fmt.Fprintf(&b, "| %d | %s | %s | error: %s |||||||\n", d.Rate, d.Server, d.Store, cell(d.Err))
			continue
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %d | %.0f | %.0f | %.2f %% | %.2f %% | %.0f %% | %.0f %% |\n",
			d.Rate, d.Server, d.Store, d.Perf.DO.Sent, d.OffersPerSec(), d.AcksPerSec(),
			d.Perf.DO.DropPercent(), d.Perf.RA.DropPercent(), 100*d.CPU.Seconds()/float64(d.Seconds),
			100*d.ClientCPU.Seconds()/float64(d.Seconds))
	}

	fmt.Fprintf(&b, "\n### TFTP: %d MiB file of random bytes, MB/s (median of %d; range)\n\n", c.FileMiB, c.Reps)
	b.WriteString("Anvil: internal/boot/tftpd over boot.Dir, in the bench process; tftpd-hpa: `in.tftpd --foreground --address IP:PORT --secure DIR`. ")
	b.WriteString("MB/s is 10^6 bytes over the client's wall time, the client run in the client namespace with `ip netns exec`.\n\n")
	b.WriteString("atftp asks for windowsize (RFC 7440); Anvil and tftpd-hpa 5.2 both decline it (seen with `atftp --trace`), so every transfer is one ACK per block.\n\n")
	b.WriteString("| client | anvil | tftpd-hpa |\n|---|---|---|\n")
	xferRows(&b, r.Xfer, "tftp", []string{"anvil", "tftpd-hpa"})

	fmt.Fprintf(&b, "\n### HTTP boot (median of %d; range)\n\n", c.Reps)
	b.WriteString("Anvil: internal/boot/httpboot over boot.Dir, in the bench process; nginx: worker_processes 1, sendfile on, access_log off. ")
	b.WriteString("GET/s: a closed loop of keep-alive GETs from `anvil bench netboot http-load`, a separate process in the client namespace.\n\n")
	b.WriteString("| measure | anvil | nginx |\n|---|---|---|\n")
	xferRows(&b, relabel(r.Xfer, fmt.Sprintf("%d MiB download (curl), MB/s", c.FileMiB)), "http", []string{"anvil", "nginx"})
	fmt.Fprintf(&b, "| 1 KiB GET/s (Go client, %d keep-alive connections, %s) |", c.LoadConns, c.LoadTime)
	for _, name := range []string{"anvil", "nginx"} {
		for _, s := range r.RPS {
			if s.Server == name {
				b.WriteString(" " + spread(s.Runs, s.Err, "%.0f"))
				if s.Errors > 0 {
					fmt.Fprintf(&b, ", %d failed", s.Errors)
				}
				b.WriteString(" |")
			}
		}
	}
	b.WriteString("\n")
	return b.String()
}

// xferRows writes one row per client of proto, one column per server.
func xferRows(b *strings.Builder, xs []XferResult, proto string, servers []string) {
	var clients []string
	for _, x := range xs {
		if x.Proto == proto && !slices.Contains(clients, x.Client) {
			clients = append(clients, x.Client)
		}
	}
	for _, cl := range clients {
		fmt.Fprintf(b, "| %s |", cl)
		for _, s := range servers {
			for _, x := range xs {
				if x.Proto == proto && x.Client == cl && x.Server == s {
					b.WriteString(" " + spread(x.Runs, x.Err, "%.1f") + " |")
				}
			}
		}
		b.WriteString("\n")
	}
}

func relabel(xs []XferResult, label string) []XferResult {
	out := slices.Clone(xs)
	for i := range out {
		if out[i].Proto == "http" {
			out[i].Client = label
		}
	}
	return out
}

// spread is "median (min–max)", or the error.
func spread(runs []float64, err, format string) string {
	if err != "" {
		return "error: " + cell(err)
	}
	if len(runs) == 0 {
		return "not run"
	}
	m := fmt.Sprintf(format, median(runs))
	if len(runs) == 1 {
		return m
	}
	return fmt.Sprintf("%s ("+format+"–"+format+")", m, slices.Min(runs), slices.Max(runs))
}

// cell keeps an error message from breaking the table.
func cell(s string) string {
	s = strings.NewReplacer("|", "/", "\n", " ").Replace(s)
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
