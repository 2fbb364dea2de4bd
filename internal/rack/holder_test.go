package rack

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
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
