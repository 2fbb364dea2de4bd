package simboot

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/anvilmetal/anvil/internal/netns"
)

// addrs adds each machine's leased address to the shared interface, so
// its HTTP leaves from its own address as a real machine's would (the
// region tells machines apart, and rate-limits anonymous calls, by it).
type addrs struct {
	mu    sync.Mutex
	fd    int
	index int
	seq   uint32
}

func openAddrs(ns, ifname string) (*addrs, error) {
	return netns.Call(ns, func() (*addrs, error) {
		ifi, err := net.InterfaceByName(ifname)
		if err != nil {
			return nil, err
		}
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
		if err != nil {
			return nil, err
		}
		if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			unix.Close(fd)
			return nil, err
		}
		return &addrs{fd: fd, index: ifi.Index}, nil
	})
}

func (a *addrs) close() { unix.Close(a.fd) }

// add puts ip/32 on the interface; an address already there is fine.
func (a *addrs) add(ip netip.Addr) error {
	if !ip.Is4() {
		return fmt.Errorf("simboot: %s is not IPv4", ip)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	b4 := ip.As4()
	attr := func(typ uint16, data []byte) []byte {
		h := make([]byte, 4, 4+len(data))
		binary.NativeEndian.PutUint16(h[0:], uint16(4+len(data)))
		binary.NativeEndian.PutUint16(h[2:], typ)
		return append(h, data...)
	}
	body := []byte{unix.AF_INET, 32, 0, unix.RT_SCOPE_UNIVERSE, 0, 0, 0, 0} // ifaddrmsg
	binary.NativeEndian.PutUint32(body[4:], uint32(a.index))
	body = append(body, attr(unix.IFA_LOCAL, b4[:])...)
	body = append(body, attr(unix.IFA_ADDRESS, b4[:])...)
	msg := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.NLMSG_HDRLEN+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], unix.RTM_NEWADDR)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_REPLACE)
	binary.NativeEndian.PutUint32(msg[8:], a.seq)
	msg = append(msg, body...)
	if err := unix.Sendto(a.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 8192)
	for {
		n, _, err := unix.Recvfrom(a.fd, buf, 0)
		if err != nil {
			return err
		}
		for b := buf[:n]; len(b) >= unix.NLMSG_HDRLEN; {
			l := int(binary.NativeEndian.Uint32(b[0:]))
			if l < unix.NLMSG_HDRLEN || l > len(b) {
				break
			}
			typ, seq := binary.NativeEndian.Uint16(b[4:]), binary.NativeEndian.Uint32(b[8:])
			data := b[unix.NLMSG_HDRLEN:l]
			b = b[min((l+3)&^3, len(b)):]
			if seq != a.seq || typ != unix.NLMSG_ERROR || len(data) < 4 {
				continue
			}
			if e := int32(binary.NativeEndian.Uint32(data)); e != 0 && unix.Errno(-e) != unix.EEXIST {
				return fmt.Errorf("simboot: adding %s: %w", ip, unix.Errno(-e))
			}
			return nil
		}
	}
}
