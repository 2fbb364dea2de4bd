package rack

import (
	"context"
	"net"
	"testing"
	"time"
)

func TestProbeTarget(t *testing.T) {
	for _, c := range []struct {
		key, network, addr string
		ok                 bool
	}{
		{"ipmi://192.0.2.3:623", "udp", "192.0.2.3:623", true},
		{"ipmi://[2001:db8::3]:6230", "udp", "[2001:db8::3]:6230", true},
		{"redfish://https://192.0.2.4:8443", "tcp", "192.0.2.4:8443", true},
		{"redfish://https://bmc.example", "tcp", "bmc.example:443", true},
		{"webhook://http://198.51.100.9/on", "tcp", "198.51.100.9:80", true},
		{"webhook://http://user@198.51.100.9:8080/on", "tcp", "198.51.100.9:8080", true},
		{"", "", "", false}, // manual power
	} {
		network, addr, ok := ProbeTarget(c.key)
		if network != c.network || addr != c.addr || ok != c.ok {
			t.Errorf("ProbeTarget(%q) = %s %s %v", c.key, network, addr, ok)
		}
	}
}

// TestProbe: a TCP BMC that accepts answers; a UDP port where nothing
// answers an RMCP ping does not; the cache believes an answer and lists
// the hosts that failed until they are due again.
func TestProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx := context.Background()
	if err := Probe(ctx, "redfish://http://"+ln.Addr().String()); err != nil {
		t.Fatalf("listening BMC: %v", err)
	}
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if err := Probe(ctx, "ipmi://"+silent.LocalAddr().String()); err == nil {
		t.Fatal("a BMC that never answers passed the probe")
	}
	p := newProbeCache(nil)
	now := time.Now()
	p.fail("192.0.2.9", now.Add(-probeBadFor-time.Second))
	p.fail("192.0.2.10", now)
	if got := p.unreachable(now); len(got) != 1 || got[0] != "192.0.2.10" {
		t.Fatalf("unreachable: %v", got)
	}
	if !p.giveBack("r1", now) || p.giveBack("r1", now) {
		t.Fatal("a request is given back once, then run")
	}
}
