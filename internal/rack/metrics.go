package rack

import "github.com/prometheus/client_golang/prometheus"

// Collector exports the rack's counters for Prometheus: what the cache
// holds, the boot events waiting for the region, and the DHCP server's
// packets and drops (a hostile or broken client shows up here, not as a
// crash), and the other racks' leases it holds.
type Collector struct{ r *Rack }

// NewCollector returns a collector for r.
func NewCollector(r *Rack) *Collector { return &Collector{r: r} }

var (
	cachedDesc  = prometheus.NewDesc("anvil_rack_cached_machines", "Machines in the rack's boot cache.", nil, nil)
	pendingDesc = prometheus.NewDesc("anvil_rack_pending_boot_events", "Boot events waiting to be sent to the region.", nil, nil)
	packetsDesc = prometheus.NewDesc("anvil_dhcp_packets_total", "DHCP requests received and answers sent, by kind.", []string{"kind"}, nil)
	dropsDesc   = prometheus.NewDesc("anvil_dhcp_dropped_total", "DHCP requests dropped, by reason.", []string{"reason"}, nil)
	peersDesc   = prometheus.NewDesc("anvil_rack_dhcp_peer_leases", "The other racks' leases this rack's DHCP knows, on subnets it shares with them.", nil, nil)
)

func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- cachedDesc
	ch <- pendingDesc
	ch <- packetsDesc
	ch <- dropsDesc
	ch <- peersDesc
}

func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(cachedDesc, prometheus.GaugeValue, float64(c.r.Cache.Len()))
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(c.r.Reporter.Pending()))
	if c.r.DHCP == nil {
		return
	}
	st := c.r.DHCP.Stats()
	for kind, v := range map[string]uint64{"received": st.Received, "offer": st.Offers, "ack": st.Acks, "nak": st.Naks, "release": st.Releases, "decline": st.Declines} {
		ch <- prometheus.MustNewConstMetric(packetsDesc, prometheus.CounterValue, float64(v), kind)
	}
	for reason, v := range st.Drops {
		ch <- prometheus.MustNewConstMetric(dropsDesc, prometheus.CounterValue, float64(v), reason)
	}
	ch <- prometheus.MustNewConstMetric(peersDesc, prometheus.GaugeValue, float64(len(c.r.DHCP.PeerLeases())))
}
