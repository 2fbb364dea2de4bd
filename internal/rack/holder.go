package rack

import (
	"bufio"
	"context"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/dhcp"
)

// Holder says which addresses hold a MAC. Sure says the answer is
// complete: no address then means nobody holds the MAC, not that the rack
// cannot tell. A per-MAC config carries the machine's enrolment secret
// only to a holder (see enrolTo).
type Holder func(ctx context.Context, mac string) (addrs []netip.Addr, sure bool)

// PeerLease is the partner rack's active lease of a MAC, on a VLAN two
// racks share (dhcp.Server.PeerLeaseOf).
type PeerLease func(mac net.HardwareAddr, now time.Time) (dhcp.Lease, bool)

// LeaseHolder answers from the rack's own DHCP: its active leases, the
// offers it just made (firmware fetches its config right after the DHCP
// exchange, and an offer is held before it is sent) and the partner's
// leases. The rack serves DHCP, so it is sure: a MAC none of these name is
// held by nobody, and a store it cannot read vouches for nobody either.
func LeaseHolder(leases dhcp.LeaseStore, peer PeerLease) Holder {
	return func(ctx context.Context, mac string) ([]netip.Addr, bool) {
		hw, err := net.ParseMAC(mac)
		if err != nil {
			return nil, true
		}
		now := time.Now()
		var out []netip.Addr
		if l, ok, err := leases.Get(ctx, hw); err == nil && ok && l.IP.IsValid() && l.Active(now) {
			out = append(out, l.IP)
		}
		if peer != nil {
			if l, ok := peer(hw, now); ok && l.IP.IsValid() {
				out = append(out, l.IP)
			}
		}
		return out, true
	}
}

// NeighbourHolder answers from the kernel's IPv4 neighbour table (a proxy
// rack leases nothing, but an L2-adjacent client that fetched a file is in
// it, perhaps beside a stale entry from an earlier address). A client
// behind a router is not: the rack cannot tell who it is, so the answer is
// never sure.
// Every complete entry counts: one from the MAC's previous address may
// linger for minutes after it took a new one.
func NeighbourHolder(path string) Holder {
	if path == "" {
		path = "/proc/net/arp"
	}
	return func(_ context.Context, mac string) ([]netip.Addr, bool) {
		f, err := os.Open(path)
		if err != nil {
			return nil, false
		}
		defer f.Close()
		return neighbour(bufio.NewScanner(f), mac), false
	}
}

// neighbour finds mac in /proc/net/arp's lines:
// "IP address  HW type  Flags  HW address  Mask  Device".
func neighbour(sc *bufio.Scanner, mac string) []netip.Addr {
	var out []netip.Addr
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.EqualFold(f[3], mac) || f[2] == "0x0" {
			continue
		}
		if a, err := netip.ParseAddr(f[0]); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// HeldBy says which MAC holds an address, "" when the rack cannot tell:
// the other way round from Holder, for the default config, which names no
// MAC.
type HeldBy func(ctx context.Context, addr netip.Addr) string

// LeaseHeldBy answers from the rack's own active DHCP leases.
func LeaseHeldBy(leases dhcp.LeaseStore) HeldBy {
	return func(ctx context.Context, addr netip.Addr) string {
		l, ok, err := leases.FindByIP(ctx, addr.Unmap())
		if err != nil || !ok || !l.Active(time.Now()) {
			return ""
		}
		return l.MAC.String()
	}
}

// NeighbourHeldBy answers from the kernel's IPv4 neighbour table: the MAC
// of a complete entry for the address.
func NeighbourHeldBy(path string) HeldBy {
	if path == "" {
		path = "/proc/net/arp"
	}
	return func(_ context.Context, addr netip.Addr) string {
		f, err := os.Open(path)
		if err != nil {
			return ""
		}
		defer f.Close()
		return neighbourOf(bufio.NewScanner(f), addr.Unmap())
	}
}

// neighbourOf finds addr's MAC in /proc/net/arp's lines.
func neighbourOf(sc *bufio.Scanner, addr netip.Addr) string {
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[2] == "0x0" {
			continue
		}
		if a, err := netip.ParseAddr(f[0]); err == nil && a == addr {
			if hw, err := net.ParseMAC(f[3]); err == nil {
				return hw.String()
			}
		}
	}
	return ""
}
