package rack

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/dhcp"
)

// leaseReport tells the region the leases this rack's DHCP holds on the
// subnets whose VLAN names a primary rack (Subnet.Role set). The region
// streams them to the VLAN's other rack, which hands none of them to
// anyone else and, if this rack dies, confirms them to their clients. The
// whole set goes each time (the region writes only what changed), a
// moment after a lease changes and every few minutes anyway, so a region
// that was away, or lost them, has them again. While the region is away
// the rack serves on: the two shares never overlap.
type leaseReport struct {
	store dhcp.LeaseStore
	cache *Cache
	host  string
	log   *slog.Logger
	wake  chan struct{}
}

const (
	leaseSettle  = 200 * time.Millisecond // a burst of ACKs goes in one report
	leaseRefresh = 5 * time.Minute
)

func newLeaseReport(store dhcp.LeaseStore, cache *Cache, host string, log *slog.Logger) *leaseReport {
	return &leaseReport{store: store, cache: cache, host: host, log: log, wake: make(chan struct{}, 1)}
}

// poke asks for a report soon; it never waits.
func (l *leaseReport) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// note pokes on what changes a lease.
func (l *leaseReport) note(e dhcp.Event) {
	switch e.Kind {
	case dhcp.EventAck, dhcp.EventRelease, dhcp.EventDecline:
		l.poke()
	}
}

// run reports until ctx ends: at once, then after every poke (at most
// once per leaseSettle), backing off while the region cannot be reached.
func (l *leaseReport) run(ctx context.Context, cl *client.Client) {
	var sent string
	var sentAt time.Time
	wait, backoff := time.Duration(0), time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		case <-time.After(wait):
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(leaseSettle):
		}
		all, err := l.store.List(ctx)
		if err != nil {
			l.log.Warn("dhcp leases not readable for the region", "err", err)
			wait = backoff
			continue
		}
		ls := reportable(all, l.cache.Subnets(), time.Now())
		if len(ls) > MaxLeaseReport {
			l.log.Warn("more leases than one report carries; the other rack learns only some", "leases", len(ls), "reported", MaxLeaseReport)
			ls = ls[:MaxLeaseReport]
		}
		b, _ := json.Marshal(ls)
		if string(b) == sent && time.Since(sentAt) < leaseRefresh {
			wait = leaseRefresh - time.Since(sentAt)
			continue
		}
		_, err = cl.Do(ctx, "POST", "rack/", url.Values{"op": {"dhcp_leases"}}, url.Values{"hostname": {l.host}, "leases": {string(b)}})
		if err != nil {
			if ctx.Err() == nil {
				l.log.Warn("cannot report dhcp leases yet", "err", err, "retry_in", backoff)
			}
			wait, backoff = backoff, min(backoff*2, 30*time.Second)
			continue
		}
		sent, sentAt, wait, backoff = string(b), time.Now(), leaseRefresh, time.Second
	}
}

// reportable are the bound, running leases among ls on subnets with a
// role, in the region's terms.
func reportable(ls []dhcp.Lease, subnets []Subnet, now time.Time) []Lease {
	roled := map[netip.Prefix]bool{}
	for _, s := range subnets {
		if p, err := netip.ParsePrefix(s.CIDR); err == nil && s.Role != "" {
			roled[p.Masked()] = true
		}
	}
	out := []Lease{}
	for _, l := range ls {
		if l.State == dhcp.StateBound && l.Active(now) && roled[l.Subnet.Masked()] {
			out = append(out, Lease{MAC: l.MAC.String(), IP: l.IP.String(), Subnet: l.Subnet.Masked().String(), Expires: l.Expires.UTC()})
		}
	}
	return out
}

// peerLeases turns the other racks' leases into the DHCP server's,
// skipping any that do not parse.
func peerLeases(ls []Lease) []dhcp.Lease {
	out := make([]dhcp.Lease, 0, len(ls))
	for _, l := range ls {
		mac, err := net.ParseMAC(l.MAC)
		ip, err2 := netip.ParseAddr(l.IP)
		sn, err3 := netip.ParsePrefix(l.Subnet)
		if err != nil || err2 != nil || err3 != nil {
			continue
		}
		out = append(out, dhcp.Lease{MAC: mac, IP: ip, Subnet: sn, State: dhcp.StateBound, Expires: l.Expires})
	}
	return out
}
