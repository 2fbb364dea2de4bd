package rack

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/dhcp"
)

func TestNeighbour(t *testing.T) {
	const table = `IP address       HW type     Flags       HW address            Mask     Device
192.0.2.10       0x1         0x2         52:54:00:aa:00:01     *        br0
192.0.2.11       0x1         0x0         52:54:00:aa:00:02     *        br0
192.0.2.12       0x1         0x2         52:54:00:aa:00:01     *        br0
`
	cases := []struct {
		mac  string
		want string
	}{
		{"52:54:00:aa:00:01", "[192.0.2.10 192.0.2.12]"}, // its old address lingers
		{"52:54:00:AA:00:01", "[192.0.2.10 192.0.2.12]"},
		{"52:54:00:aa:00:02", "[]"}, // incomplete entry: nobody holds it yet
		{"52:54:00:aa:00:03", "[]"},
	}
	for _, c := range cases {
		got := neighbour(bufio.NewScanner(strings.NewReader(table)), c.mac)
		if s := fmt.Sprint(got); s != c.want {
			t.Errorf("%s: got %s, want %s", c.mac, s, c.want)
		}
	}
}

// TestEnrolTo: who a per-MAC config's enrolment secret may go to.
func TestEnrolTo(t *testing.T) {
	const mac, other = "52:54:00:aa:00:01", "52:54:00:aa:00:09"
	a, b := netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("192.0.2.11")
	cases := []struct {
		name         string
		holders      []netip.Addr
		sure         bool
		asker        string
		known, holds bool
	}{
		{"the holder", []netip.Addr{a}, true, "", true, true},
		{"a neighbour holds it", []netip.Addr{a}, false, "", true, true},
		{"another address, sure", []netip.Addr{b}, true, "", true, false},
		{"another address, from the neighbours", []netip.Addr{b}, false, "", true, false},
		// The rack's own DHCP: no lease and no offer is nobody.
		{"nobody, sure", nil, true, "", true, false},
		{"nobody, sure, asker holds another", nil, true, other, true, false},
		// Cannot tell who holds it, but the asker holds another MAC.
		{"unsure, asker holds another", nil, false, other, true, false},
		{"unsure, asker holds it", nil, false, "52:54:00:AA:00:01", false, false},
		{"cannot tell", nil, false, "", false, false},
	}
	for _, c := range cases {
		known, holds := enrolTo(mac, a, c.holders, c.sure, c.asker)
		if known != c.known || holds != c.holds {
			t.Errorf("%s: known %v holds %v, want %v %v", c.name, known, holds, c.known, c.holds)
		}
	}
}

// TestLeaseHolder: active leases, fresh offers and the partner's leases
// hold a MAC; an expired lease or an offer gone stale does not, and the
// answer is always sure.
func TestLeaseHolder(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	st := dhcp.NewMemStore()
	put := func(mac, ip string, state dhcp.LeaseState, expires time.Time) {
		hw, _ := net.ParseMAC(mac)
		if err := st.Put(ctx, dhcp.Lease{MAC: hw, IP: netip.MustParseAddr(ip), State: state, Expires: expires, Updated: now}); err != nil {
			t.Fatal(err)
		}
	}
	put("52:54:00:bb:00:01", "192.0.2.101", dhcp.StateBound, now.Add(time.Hour))
	put("52:54:00:bb:00:02", "192.0.2.102", dhcp.StateOffered, now.Add(30*time.Second))
	put("52:54:00:bb:00:03", "192.0.2.103", dhcp.StateBound, now.Add(-time.Minute))
	put("52:54:00:bb:00:04", "192.0.2.104", dhcp.StateOffered, now.Add(-time.Second))
	put("52:54:00:bb:00:05", "192.0.2.105", dhcp.StateReleased, now.Add(time.Hour))
	peer := func(mac net.HardwareAddr, at time.Time) (dhcp.Lease, bool) {
		if mac.String() != "52:54:00:bb:00:06" {
			return dhcp.Lease{}, false
		}
		return dhcp.Lease{MAC: mac, IP: netip.MustParseAddr("192.0.2.206"), State: dhcp.StateBound, Expires: at.Add(time.Hour)}, true
	}
	h := LeaseHolder(st, peer)
	for mac, want := range map[string]string{
		"52:54:00:bb:00:01": "[192.0.2.101]",
		"52:54:00:bb:00:02": "[192.0.2.102]", // just offered
		"52:54:00:bb:00:03": "[]",            // expired
		"52:54:00:bb:00:04": "[]",            // the offer lapsed
		"52:54:00:bb:00:05": "[]",            // released
		"52:54:00:bb:00:06": "[192.0.2.206]", // the partner's lease
		"52:54:00:bb:00:07": "[]",
		"not a mac":         "[]",
	} {
		got, sure := h(ctx, mac)
		if fmt.Sprint(got) != want || !sure {
			t.Errorf("%s: %v sure %v, want %s sure", mac, got, sure, want)
		}
	}
}
