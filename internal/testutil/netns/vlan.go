package netns

import (
	"encoding/binary"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// VLAN gives the namespace an address on VLAN vid of bridge's segment
// without the kernel's 802.1Q support (kernels without 8021q or bridge
// VLAN filtering, such as some VM hosts): a tap on the bridge carries the
// tagged frames, a second tap holds cidr, and the test process moves
// frames between them, taking the tag off and putting it on. Other VLANs'
// frames and untagged ones are left alone. name is a prefix of at most 10
// characters for the two taps (name+"t" on the bridge, name+"u" with the
// address). Everything goes when the test ends.
func (n *NS) VLAN(bridge string, vid int, cidr, name string) {
	n.t.Helper()
	var tagged, untagged *os.File
	err := n.Do(func() error {
		var err error
		if tagged, err = openTap(name + "t"); err != nil {
			return err
		}
		untagged, err = openTap(name + "u")
		return err
	})
	if err != nil {
		n.t.Fatalf("VLAN %d taps: %v", vid, err)
	}
	n.t.Cleanup(func() { tagged.Close(); untagged.Close() })
	n.Ip("link", "set", name+"t", "master", bridge, "up")
	// Tagged frames are 4 bytes longer than what the untagged side sends.
	n.Ip("link", "set", name+"u", "mtu", "1496", "up")
	n.Ip("addr", "add", cidr, "dev", name+"u")
	go untag(tagged, untagged, uint16(vid))
	go tag(untagged, tagged, uint16(vid))
}

func openTap(name string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tap %s: %w", name, err)
	}
	// Non-blocking, so the runtime's poller owns it and Close ends a read.
	return os.NewFile(uintptr(fd), name), nil
}

const tpid = 0x8100

// untag passes frames of VLAN vid from the bridge side, without their tag.
func untag(from, to *os.File, vid uint16) {
	buf := make([]byte, 65536)
	for {
		n, err := from.Read(buf)
		if err != nil {
			return
		}
		f := buf[:n]
		if n < 18 || binary.BigEndian.Uint16(f[12:14]) != tpid || binary.BigEndian.Uint16(f[14:16])&0x0fff != vid {
			continue
		}
		copy(f[4:16], f[:12])
		if _, err := to.Write(f[4:]); err != nil {
			return
		}
	}
}

// tag passes every frame from the address side onto the bridge, tagged.
func tag(from, to *os.File, vid uint16) {
	buf := make([]byte, 65536+4)
	for {
		n, err := from.Read(buf[4:])
		if err != nil {
			return
		}
		if n < 14 {
			continue
		}
		f := buf[:n+4]
		copy(f[:12], f[4:16])
		binary.BigEndian.PutUint16(f[12:14], tpid)
		binary.BigEndian.PutUint16(f[14:16], vid)
		if _, err := to.Write(f); err != nil {
			return
		}
	}
}
