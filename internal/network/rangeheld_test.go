package network

import (
	"net/netip"
	"testing"
)

func TestValidateRangeOverHeld(t *testing.T) {
	a := netip.MustParseAddr
	rg := func(typ IPRangeType, subnet int, start, end string) *IPRange {
		return &IPRange{SubnetID: subnet, Type: typ, Start: a(start), End: a(end)}
	}
	held := []netip.Addr{a("192.0.2.50"), a("192.0.2.120")}
	for _, c := range []struct {
		what string
		r    *IPRange
		was  *IPRange
		ok   bool
	}{
		{"clear", rg(RangeDynamic, 1, "192.0.2.60", "192.0.2.110"), nil, true},
		{"over one", rg(RangeDynamic, 1, "192.0.2.40", "192.0.2.60"), nil, false},
		{"on one", rg(RangeDynamic, 1, "192.0.2.50", "192.0.2.50"), nil, false},
		{"reserved over one", rg(RangeReserved, 1, "192.0.2.40", "192.0.2.60"), nil, true},
		{"grown where nothing is held", rg(RangeDynamic, 1, "192.0.2.100", "192.0.2.160"), rg(RangeDynamic, 1, "192.0.2.100", "192.0.2.150"), true},
		{"grown over one", rg(RangeDynamic, 1, "192.0.2.40", "192.0.2.150"), rg(RangeDynamic, 1, "192.0.2.100", "192.0.2.150"), false},
		{"turned dynamic", rg(RangeDynamic, 1, "192.0.2.100", "192.0.2.150"), rg(RangeReserved, 1, "192.0.2.100", "192.0.2.150"), false},
		{"moved subnet", rg(RangeDynamic, 2, "192.0.2.100", "192.0.2.150"), rg(RangeDynamic, 1, "192.0.2.100", "192.0.2.150"), false},
		{"another family", rg(RangeDynamic, 1, "2001:db8::1", "2001:db8::ffff"), nil, true},
	} {
		fe := ValidateRangeOverHeld(*c.r, c.was, held)
		if (len(fe) == 0) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.what, fe, c.ok)
		}
		if !c.ok && fe["__all__"][0] != "Requested dynamic range conflicts with an existing IP address or range." {
			t.Errorf("%s: says %v", c.what, fe)
		}
	}
}
