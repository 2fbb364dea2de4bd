package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/anvilmetal/anvil/internal/dnszone"
)

// serveWith runs a server with limits l on 127.0.0.1.
func serveWith(t *testing.T, d Data, l Limits) (*Server, string) {
	t.Helper()
	s := New(nil)
	s.SetLimits(l)
	s.Set(d)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr, err := s.ListenAndServe(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return s, addr.String()
}

// udpFrom is a UDP socket on the loopback address src.
func udpFrom(t *testing.T, src string) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(src)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// flood sends n queries for name from c to addr as fast as it can, and
// counts the answers that come back (until a second of silence): full
// ones, truncated ones and each rcode.
type tally struct {
	answers, truncated int
	rcodes             map[int]int
}

func flood(t *testing.T, c *net.UDPConn, addr string, n int, name func(int) string) tally {
	t.Helper()
	to := net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr))
	got := tally{rcodes: map[int]int{}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 65535)
		for {
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			k, err := c.Read(buf)
			if err != nil {
				return
			}
			m := new(dns.Msg)
			if m.Unpack(buf[:k]) != nil {
				continue
			}
			got.rcodes[m.Rcode]++
			if m.Truncated {
				got.truncated++
			} else if len(m.Answer) > 0 {
				got.answers++
			}
		}
	}()
	for i := range n {
		q := new(dns.Msg)
		q.SetQuestion(name(i), dns.TypeA)
		q.Id = uint16(i)
		wire, _ := q.Pack()
		if _, err := c.WriteToUDP(wire, to); err != nil {
			t.Fatal(err)
		}
		if i%64 == 63 {
			time.Sleep(time.Millisecond) // within the socket buffers
		}
	}
	wg.Wait()
	return got
}

// askFrom asks one question from src over UDP.
func askFrom(t *testing.T, src, addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	c := &dns.Client{Dialer: &net.Dialer{LocalAddr: &net.UDPAddr{IP: net.ParseIP(src)}}, Timeout: 5 * time.Second}
	r, _, err := c.Exchange(q, addr)
	if err != nil {
		t.Fatalf("%s from %s: %v", name, src, err)
	}
	return r
}

// TestResponseRateLimit: a flood from one address (as a forged source
// would draw onto its victim) gets about the rate in answers, every
// second limited one an empty truncated answer and the rest nothing; a
// client in another /24 is answered in full meanwhile.
func TestResponseRateLimit(t *testing.T) {
	const rate, n = 20, 600
	_, addr := serveWith(t, sampleData(), Limits{RRLRate: rate, RRLSlip: 2})
	c := udpFrom(t, "127.0.0.2")
	start := time.Now()
	got := flood(t, c, addr, n, func(int) string { return "node1.maas." })
	secs := time.Since(start).Seconds()
	t.Logf("%d queries in %.1fs: %d answered, %d truncated", n, secs, got.answers, got.truncated)
	if max := rate + int(secs*rate) + rate; got.answers > max {
		t.Errorf("%d full answers to one flooding address; want at most about %d", got.answers, max)
	}
	if got.truncated == 0 {
		t.Error("no truncated answers: a real client behind the address cannot retry over TCP")
	}
	if dropped := n - got.answers - got.truncated; dropped < n/3 {
		t.Errorf("only %d of %d answers dropped", dropped, n)
	}
	// Another /24 is not affected.
	if r := askFrom(t, "127.0.1.1", addr, "node1.maas.", dns.TypeA); r.Truncated || len(r.Answer) != 1 {
		t.Fatalf("a client in another /24 during the flood: %v", r)
	}
}

// TestUDPAnswerSize: a large RRset drawn over UDP stays within 512 bytes
// without EDNS, and within the server's maximum with any EDNS buffer,
// truncated; over TCP it comes whole.
func TestUDPAnswerSize(t *testing.T) {
	_, addr := serveWith(t, sampleData(), Limits{})
	for _, buf := range []uint16{0, 1232, 4096, 65000} {
		q := new(dns.Msg)
		q.SetQuestion("big.maas.", dns.TypeTXT)
		want := dns.MinMsgSize
		if buf > 0 {
			q.SetEdns0(buf, false)
			want = min(int(buf), maxUDP)
		}
		wire, err := exchangeRaw(q, addr)
		if err != nil {
			t.Fatal(err)
		}
		r := new(dns.Msg)
		if err := r.Unpack(wire); err != nil {
			t.Fatal(err)
		}
		if len(wire) > want || !r.Truncated {
			t.Errorf("EDNS buffer %d: %d bytes, truncated %v; want at most %d, truncated", buf, len(wire), r.Truncated, want)
		}
	}
	if r := ask(t, addr, "big.maas.", dns.TypeTXT, "tcp"); r.Truncated || len(r.Answer) != 60 {
		t.Fatalf("over TCP: %d records, truncated %v", len(r.Answer), r.Truncated)
	}
}

// exchangeRaw sends q over UDP and returns the answer's bytes as sent.
func exchangeRaw(q *dns.Msg, addr string) ([]byte, error) {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	wire, _ := q.Pack()
	if _, err := c.Write(wire); err != nil {
		return nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	return buf[:n], err
}

// tcpHeld opens a TCP connection from src and asks one question on it,
// reporting whether the server answered (it holds the connection, idle,
// afterwards) or closed it (over a cap).
func tcpHeld(t *testing.T, src, addr string) bool {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", src, err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &dns.Conn{Conn: nc}
	q := new(dns.Msg)
	q.SetQuestion("node1.maas.", dns.TypeA)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := c.WriteMsg(q); err != nil {
		return false
	}
	r, err := c.ReadMsg()
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("from %s: neither answered nor closed: %v", src, err)
		}
		return false
	}
	return len(r.Answer) == 1
}

// TestTCPConnectionCaps: connections held open from several addresses
// stop at the per-address cap, then at the cap in all; other addresses
// are served over TCP until the cap in all, and over UDP throughout.
func TestTCPConnectionCaps(t *testing.T) {
	const total, per = 10, 3
	_, addr := serveWith(t, sampleData(), Limits{TCPConns: total, TCPConnsPerAddress: per})
	held := 0
	for _, src := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		n := 0
		for range 2 * per {
			if tcpHeld(t, src, addr) {
				n++
			}
		}
		if n != per {
			t.Fatalf("%s holds %d connections; want %d", src, n, per)
		}
		held += n
	}
	if !tcpHeld(t, "127.0.1.1", addr) {
		t.Fatal("another address was refused under the cap in all")
	}
	held++
	for i := 5; held < total+5; i++ {
		if tcpHeld(t, fmt.Sprintf("127.0.0.%d", i), addr) {
			held++
			if held > total {
				t.Fatalf("%d connections held; the cap is %d", held, total)
			}
		} else if held < total {
			t.Fatalf("connection %d refused under the cap in all", held+1)
		} else {
			break
		}
	}
	if r := askFrom(t, "127.0.2.1", addr, "node1.maas.", dns.TypeA); len(r.Answer) != 1 {
		t.Fatalf("UDP with TCP at its cap: %v", r)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(es)
}

// TestForwardFloodToDeadUpstream: a flood of queries forwarded to an
// upstream that never answers holds at most the cap of sockets, and the
// queries over it are answered SERVFAIL at once.
func TestForwardFloodToDeadUpstream(t *testing.T) {
	dead, err := net.ListenPacket("udp", "127.0.0.1:0") // never read
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	d := sampleData()
	d.Upstream = []string{dead.LocalAddr().String()}
	d.DNSSEC = "no"
	d.Zones.Subnets = append(d.Zones.Subnets, dnszone.Subnet{CIDR: netip.MustParsePrefix("127.0.0.0/8")})
	const forwards, perPrefix, n = 24, 16, 3000
	_, addr := serveWith(t, d, Limits{RRLRate: -1, Forwards: forwards, ForwardsPerPrefix: perPrefix})
	base := openFDs(t)

	peak := 0
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak = max(peak, openFDs(t))
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	tallies := make([]tally, 3)
	for i, src := range []string{"127.0.0.2", "127.0.1.2", "127.0.2.2"} {
		c := udpFrom(t, src)
		wg.Add(1)
		go func() {
			defer wg.Done()
			tallies[i] = flood(t, c, addr, n, func(j int) string { return fmt.Sprintf("q%d-%d.example.org.", i, j) })
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	servfail := 0
	for _, g := range tallies {
		servfail += g.rcodes[dns.RcodeServerFailure]
	}
	t.Logf("%d queries from 3 prefixes: %d SERVFAIL; descriptors %d before, %d at the peak", 3*n, servfail, base, peak)
	// Each client socket and a few of the runtime's come and go; each
	// forward holds one socket.
	if peak > base+forwards+16 {
		t.Errorf("%d descriptors open at the peak (%d before); forwards are capped at %d", peak, base, forwards)
	}
	// Most are over the cap; UDP on a loaded machine loses some of them.
	if servfail < n/10 {
		t.Errorf("%d SERVFAIL answers to %d queries, nearly all over the cap", servfail, 3*n)
	}
}
