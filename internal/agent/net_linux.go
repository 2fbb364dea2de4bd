package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
	"unsafe"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"golang.org/x/sys/unix"
)

// Lease is the first DHCP lease the environment got.
type Lease struct {
	Iface   string
	MAC     string
	IP      net.IP
	Mask    net.IPMask
	Router  net.IP
	DNS     []net.IP
	Elapsed time.Duration
}

// withSocket runs fn with a datagram socket to issue interface ioctls on.
func withSocket(fn func(fd int) error) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return fn(fd)
}

// LinkUp sets IFF_UP on an interface.
func LinkUp(name string) error { return withSocket(func(fd int) error { return linkUp(fd, name) }) }

func linkUp(fd int, name string) error {
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("%s: get flags: %w", name, err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("%s: set up: %w", name, err)
	}
	return nil
}

// SetAddress configures an IPv4 address and netmask on an interface.
func SetAddress(name string, ip net.IP, mask net.IPMask) error {
	return withSocket(func(fd int) error { return setAddress(fd, name, ip, mask) })
}

func setAddress(fd int, name string, ip net.IP, mask net.IPMask) error {
	for _, s := range []struct {
		req uint
		v   []byte
	}{{unix.SIOCSIFADDR, ip.To4()}, {unix.SIOCSIFNETMASK, net.IP(mask).To4()}} {
		ifr, err := unix.NewIfreq(name)
		if err != nil {
			return err
		}
		if err := ifr.SetInet4Addr(s.v); err != nil {
			return err
		}
		if err := unix.IoctlIfreq(fd, s.req, ifr); err != nil {
			return fmt.Errorf("%s: set address: %w", name, err)
		}
	}
	return nil
}

// rtentry is struct rtentry from <net/route.h> on 64-bit Linux.
type rtentry struct {
	pad1    uintptr
	dst     unix.RawSockaddrInet4
	gateway unix.RawSockaddrInet4
	genmask unix.RawSockaddrInet4
	flags   uint16
	pad2    int16
	pad3    uintptr
	pad4    uintptr
	metric  int16
	dev     *byte
	mtu     uintptr
	window  uintptr
	irtt    uint16
}

// AddDefaultRoute adds 0.0.0.0/0 via gw out of dev.
func AddDefaultRoute(dev string, gw net.IP) error {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return errors.New("default route: only 64-bit platforms")
	}
	name, err := unix.BytePtrFromString(dev)
	if err != nil {
		return err
	}
	rt := rtentry{flags: unix.RTF_UP | unix.RTF_GATEWAY, dev: name}
	rt.dst.Family, rt.genmask.Family, rt.gateway.Family = unix.AF_INET, unix.AF_INET, unix.AF_INET
	copy(rt.gateway.Addr[:], gw.To4())
	return withSocket(func(fd int) error {
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCADDRT, uintptr(unsafe.Pointer(&rt))); e != 0 && e != unix.EEXIST {
			return fmt.Errorf("default route via %s dev %s: %w", gw, dev, e)
		}
		return nil
	})
}

// dhcpOnce asks for a lease on one interface and configures its address.
func dhcpOnce(ctx context.Context, iface string) (*Lease, error) {
	c, err := nclient4.New(iface, nclient4.WithTimeout(2*time.Second), nclient4.WithRetry(2))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	l, err := c.Request(ctx, dhcpv4.WithOption(dhcpv4.OptClassIdentifier("anvil-ephemeral")))
	if err != nil {
		return nil, err
	}
	ack := l.ACK
	lease := &Lease{Iface: iface, MAC: c.InterfaceAddr().String(), IP: ack.YourIPAddr, Mask: ack.SubnetMask(), DNS: ack.DNS()}
	if r := ack.Router(); len(r) > 0 {
		lease.Router = r[0]
	}
	if lease.Mask == nil {
		lease.Mask = lease.IP.DefaultMask()
	}
	return lease, SetAddress(iface, lease.IP, lease.Mask)
}

// BringUpNetwork brings lo and every physical NIC up and runs DHCP on the
// NICs concurrently, until the boot NIC (bootMAC; any NIC when empty) gets
// a lease, or another does and the boot NIC stays without one for a few
// seconds more, or ctx ends. The chosen lease's interface gets the default
// route and /etc/resolv.conf; the others keep trying in the background and
// configure their own address.
func BringUpNetwork(ctx context.Context, nics []string, bootMAC string, log func(string, ...any)) (*Lease, error) {
	start := time.Now()
	if err := LinkUp("lo"); err != nil {
		log("lo: %v", err)
	}
	if err := SetAddress("lo", net.IPv4(127, 0, 0, 1), net.CIDRMask(8, 32)); err != nil {
		log("lo: %v", err)
	}
	if len(nics) == 0 {
		return nil, errors.New("no network interfaces")
	}
	leases := make(chan *Lease, len(nics))
	// The NICs that lose the race keep trying for a while after this
	// returns, so every NIC that can get an address gets one.
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	go func() { <-bg.Done(); cancel() }()
	for _, n := range nics {
		if err := LinkUp(n); err != nil {
			log("%v", err)
			continue
		}
		go func() {
			delay := time.Second
			for attempt := 1; bg.Err() == nil; attempt++ {
				l, err := dhcpOnce(bg, n)
				if err == nil {
					l.Elapsed = time.Since(start)
					log("dhcp iface=%s mac=%s ip=%s/%d router=%s after=%dms", n, l.MAC, l.IP, maskBits(l.Mask), l.Router, l.Elapsed.Milliseconds())
					leases <- l
					return
				}
				if attempt == 1 || attempt%10 == 0 {
					log("dhcp iface=%s attempt %d: %v", n, attempt, err)
				}
				select {
				case <-bg.Done():
				case <-time.After(delay):
				}
				delay = min(2*delay, 15*time.Second)
			}
		}()
	}
	l, err := pickLease(ctx, leases, bootMAC, bootLeaseWait)
	if err != nil {
		return nil, fmt.Errorf("no DHCP lease on %s: %w", strings.Join(nics, ","), err)
	}
	if l.Router != nil {
		if err := AddDefaultRoute(l.Iface, l.Router); err != nil {
			log("%v", err)
		}
	}
	writeResolvConf(l.DNS)
	return l, nil
}

func maskBits(m net.IPMask) int { n, _ := m.Size(); return n }

func writeResolvConf(dns []net.IP) {
	if len(dns) == 0 {
		return
	}
	var b strings.Builder
	for _, d := range dns {
		fmt.Fprintf(&b, "nameserver %s\n", d)
	}
	_ = os.MkdirAll("/etc", 0o755)
	_ = os.WriteFile("/etc/resolv.conf", []byte(b.String()), 0o644)
}
