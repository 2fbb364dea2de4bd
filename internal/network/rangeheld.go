package network

import "net/netip"

// ValidateRangeOverHeld refuses a dynamic range over an address already
// held (a reserved IP, a user's reservation, a STATIC or AUTO link): DHCP
// would hand it to another host. Reserved ranges may hold such addresses,
// as in MAAS. A dynamic range that is changed (was, nil for a new range)
// is checked only where it grows, as MAAS does: an address reserved with
// a MAC inside a dynamic range stays allowed. The store runs this in the
// transaction that writes the range, with the subnet's addresses read
// there.
func ValidateRangeOverHeld(r IPRange, was *IPRange, held []netip.Addr) FieldErrors {
	var e FieldErrors
	if r.Type != RangeDynamic {
		return e
	}
	grown := func(a netip.Addr) bool {
		return was == nil || was.Type != RangeDynamic || was.SubnetID != r.SubnetID || !was.Contains(a)
	}
	for _, a := range held {
		if r.Contains(a) && grown(a) {
			e.Add("__all__", "Requested %s range conflicts with an existing IP address or range.", r.Type)
			break
		}
	}
	return e
}
