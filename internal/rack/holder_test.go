package rack

import (
	"bufio"
	"net/netip"
	"strings"
	"testing"
)

func TestNeighbour(t *testing.T) {
	const table = `IP address       HW type     Flags       HW address            Mask     Device
192.0.2.10       0x1         0x2         52:54:00:aa:00:01     *        br0
192.0.2.11       0x1         0x0         52:54:00:aa:00:02     *        br0
`
	cases := []struct {
		mac  string
		want string
	}{
		{"52:54:00:aa:00:01", "192.0.2.10"},
		{"52:54:00:AA:00:01", "192.0.2.10"},
		{"52:54:00:aa:00:02", ""}, // incomplete entry: nobody holds it yet
		{"52:54:00:aa:00:03", ""},
	}
	for _, c := range cases {
		a, ok := neighbour(bufio.NewScanner(strings.NewReader(table)), c.mac)
		if c.want == "" {
			if ok {
				t.Errorf("%s: got %s, want unknown", c.mac, a)
			}
			continue
		}
		if !ok || a != netip.MustParseAddr(c.want) {
			t.Errorf("%s: got %s %v, want %s", c.mac, a, ok, c.want)
		}
	}
}
