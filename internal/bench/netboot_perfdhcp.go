package bench

import (
	"fmt"
	"regexp"
	"strconv"
)

// PerfExchange is one half of perfdhcp's DORA (DISCOVER-OFFER or
// REQUEST-ACK) as it reports it.
type PerfExchange struct {
	Sent, Received, Drops int
}

// DropPercent is drops per request sent.
func (e PerfExchange) DropPercent() float64 {
	if e.Sent == 0 {
		return 0
	}
	return 100 * float64(e.Drops) / float64(e.Sent)
}

// PerfdhcpStats is what the bench reads from one perfdhcp run.
type PerfdhcpStats struct {
	DO, RA PerfExchange
	// Rate is perfdhcp's own "4-way exchanges/second".
	Rate float64
}

var (
	perfBlock = regexp.MustCompile(`(?s)Statistics for: (DISCOVER-OFFER|REQUEST-ACK)\*+\s+sent packets: (\d+)\s+received packets: (\d+)\s+drops: (\d+)`)
	perfRate  = regexp.MustCompile(`Rate: ([0-9.eE+-]+) 4-way exchanges/second`)
)

// parsePerfdhcp reads the final report of `perfdhcp -4` (Kea 2.x).
func parsePerfdhcp(out string) (PerfdhcpStats, error) {
	var s PerfdhcpStats
	blocks := perfBlock.FindAllStringSubmatch(out, -1)
	seen := map[string]bool{}
	for _, m := range blocks {
		var e PerfExchange
		e.Sent, _ = strconv.Atoi(m[2])
		e.Received, _ = strconv.Atoi(m[3])
		e.Drops, _ = strconv.Atoi(m[4])
		if m[1] == "DISCOVER-OFFER" {
			s.DO = e
		} else {
			s.RA = e
		}
		seen[m[1]] = true
	}
	if !seen["DISCOVER-OFFER"] {
		return s, fmt.Errorf("no DISCOVER-OFFER statistics in perfdhcp output")
	}
	// With no OFFER at all perfdhcp sends no REQUEST and may omit the
	// REQUEST-ACK block: that is zero acks, not a parse failure.
	if m := perfRate.FindStringSubmatch(out); m != nil {
		s.Rate, _ = strconv.ParseFloat(m[1], 64)
	}
	return s, nil
}
