package rack

import (
	"bufio"
	"context"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/anvilmetal/anvil/internal/dhcp"
)

// Holder says which addresses hold a MAC, when the rack can know it; none
// when it cannot tell. A per-MAC config carries the machine's enrolment
// secret only to a holder.
type Holder func(ctx context.Context, mac string) []netip.Addr

// LeaseHolder answers from the rack's own DHCP leases.
func LeaseHolder(leases dhcp.LeaseStore) Holder {
	return func(ctx context.Context, mac string) []netip.Addr {
		hw, err := net.ParseMAC(mac)
		if err != nil {
			return nil
		}
		l, ok, err := leases.Get(ctx, hw)
		if err != nil || !ok || !l.IP.IsValid() {
			return nil
		}
		return []netip.Addr{l.IP}
	}
}

// NeighbourHolder answers from the kernel's IPv4 neighbour table (a proxy
// rack leases nothing, but an L2-adjacent client that fetched a file is in
// it, perhaps beside a stale entry from an earlier address). A client
// behind a router is not: the rack cannot tell who it is.
// Every complete entry counts: one from the MAC's previous address may
// linger for minutes after it took a new one.
func NeighbourHolder(path string) Holder {
	if path == "" {
		path = "/proc/net/arp"
	}
	return func(_ context.Context, mac string) []netip.Addr {
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		return neighbour(bufio.NewScanner(f), mac)
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
