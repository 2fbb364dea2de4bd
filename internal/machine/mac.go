package machine

import (
	"fmt"
	"net"
)

// CheckMachineMAC refuses a (normalised) MAC no network interface can
// have: the broadcast address, all zeros, and multicast addresses (the
// low bit of the first octet). Stored on a machine, such a MAC would match
// whatever frame or lease carries it, or nothing at all.
func CheckMachineMAC(mac string) error {
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return fmt.Errorf("%q is not a valid MAC address", mac)
	}
	switch {
	case mac == "ff:ff:ff:ff:ff:ff":
		return fmt.Errorf("%s is the broadcast address, not a network interface's", mac)
	case mac == "00:00:00:00:00:00":
		return fmt.Errorf("%s is all zeros, not a network interface's address", mac)
	case hw[0]&1 == 1:
		return fmt.Errorf("%s is a multicast address (the first octet is odd), not a network interface's", mac)
	}
	return nil
}

// NormaliseMachineMAC is NormaliseMAC for a MAC a machine is to have.
func NormaliseMachineMAC(v string) (string, error) {
	mac, err := NormaliseMAC(v)
	if err != nil {
		return "", err
	}
	return mac, CheckMachineMAC(mac)
}
