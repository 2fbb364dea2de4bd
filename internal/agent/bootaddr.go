package agent

import (
	"context"
	"net"
	"net/http"
	"time"
)

// The rack's sighting of this boot (anvil.seen) holds only in a hello from
// the address the rack served the boot to: the boot NIC's. A machine with
// several NICs on one network may otherwise speak from another's.

// addrOf is the first IPv4 address of the NIC with MAC mac, nil when it
// has none (yet).
func addrOf(mac string) net.IP {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	for _, ifc := range ifs {
		if NormaliseMAC(ifc.HardwareAddr.String()) != mac {
			continue
		}
		as, _ := ifc.Addrs()
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
				return n.IP
			}
		}
	}
	return nil
}

// bootNICAddr waits up to wait for the boot NIC to have an address (its
// lease may come after another NIC's).
func bootNICAddr(ctx context.Context, mac string, wait time.Duration) net.IP {
	deadline := time.Now().Add(wait)
	for {
		if ip := addrOf(mac); ip != nil || time.Now().After(deadline) || ctx.Err() != nil {
			return ip
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// metadataHTTP is the client for the region: from the boot NIC's address
// when known.
func metadataHTTP(from net.IP) *http.Client {
	c := &http.Client{Timeout: 60 * time.Second}
	if from != nil {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: from}, Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		c.Transport = &http.Transport{DialContext: d.DialContext, Proxy: nil, MaxIdleConnsPerHost: 2}
	}
	return c
}
