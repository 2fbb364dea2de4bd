package tftpd

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// firstAnswers sends a read request for name from n sockets on src and
// never ACKs; it counts the transfers started (a DATA packet came back)
// and refused (an ERROR).
func firstAnswers(t *testing.T, src string, port, n int, name string) (data, refused int) {
	t.Helper()
	rrq := binary.BigEndian.AppendUint16(nil, 1)
	rrq = append(append(append(rrq, name...), 0), "octet\x00"...)
	var socks []*net.UDPConn
	for range n {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(src)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.WriteToUDP(rrq, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}); err != nil {
			t.Fatal(err)
		}
		socks = append(socks, c)
	}
	buf := make([]byte, 65536)
	for _, c := range socks {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		k, _, err := c.ReadFromUDP(buf)
		if err != nil || k < 4 {
			t.Fatalf("no answer to a read request from %s: %v", src, err)
		}
		switch binary.BigEndian.Uint16(buf) {
		case 3:
			data++
		case 5:
			refused++
		}
	}
	return data, refused
}

// TestTransferCaps: read requests that never ACK (a flood, or forged
// sources) hold at most the per-address cap of transfers (each a socket)
// from one address and the cap in all from everyone; the rest are
// refused at once, and another address is served meanwhile.
func TestTransferCaps(t *testing.T) {
	const per, total = 4, 10
	port, _ := serve(t, Options{MaxPerAddress: per, MaxTransfers: total, Timeout: 200 * time.Millisecond, Retries: 3})
	if data, refused := firstAnswers(t, "127.0.0.2", port, 3*per, "mid"); data != per || refused != 2*per {
		t.Fatalf("one address: %d transfers started, %d refused; want %d and %d", data, refused, per, 2*per)
	}
	if data, _ := firstAnswers(t, "127.0.0.3", port, 1, "mid"); data != 1 {
		t.Fatal("another address was refused during the flood")
	}
	started := per + 1
	for _, src := range []string{"127.0.0.4", "127.0.0.5"} {
		data, _ := firstAnswers(t, src, port, per, "mid")
		started += data
	}
	if started != total {
		t.Fatalf("%d transfers under way at once; the cap is %d", started, total)
	}
}
