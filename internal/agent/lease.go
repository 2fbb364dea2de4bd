package agent

import (
	"context"
	"net"
	"net/http"
	"time"
)

// bootLeaseWait is how long the environment waits for the boot NIC's lease
// once another NIC has one.
const bootLeaseWait = 10 * time.Second

// pickLease chooses the lease the environment talks to Anvil from: the
// boot NIC's (bootMAC), since the rack binds the machine's enrolment to the
// address it leased to the MAC that fetched the boot config, and a hello
// from a sibling NIC's address would not count. Without a boot MAC, or if
// the boot NIC has no lease within wait after another NIC got one, the
// first lease is taken.
func pickLease(ctx context.Context, leases <-chan *Lease, bootMAC string, wait time.Duration) (*Lease, error) {
	var (
		first *Lease
		timer <-chan time.Time
	)
	for {
		select {
		case l := <-leases:
			if bootMAC == "" || NormaliseMAC(l.MAC) == NormaliseMAC(bootMAC) {
				return l, nil
			}
			if first == nil {
				first, timer = l, time.After(wait)
			}
		case <-timer:
			return first, nil
		case <-ctx.Done():
			if first != nil {
				return first, nil
			}
			return nil, ctx.Err()
		}
	}
}

// fromAddress is a transport whose connections leave from ip: with several
// NICs on one subnet the kernel would pick the first NIC's address, and the
// region believes an enrolment only from the address the rack leased to the
// boot NIC.
func fromAddress(ip net.IP) http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, LocalAddr: &net.TCPAddr{IP: ip}}).DialContext
	return t
}
