package dhcpshare

import (
	"fmt"
	"net/netip"
	"testing"
)

func rg(a, b string) Range { return Range{netip.MustParseAddr(a), netip.MustParseAddr(b)} }

func TestRoleOf(t *testing.T) {
	cases := []struct {
		v    Racks
		rack string
		want Role
	}{
		{Racks{}, "aaaaaa", Any},
		{Racks{Secondary: "bbbbbb"}, "bbbbbb", Any}, // a secondary alone counts for nothing
		{Racks{Secondary: "bbbbbb"}, "cccccc", Any},
		{Racks{Primary: "aaaaaa"}, "aaaaaa", Primary},
		{Racks{Primary: "aaaaaa"}, "bbbbbb", Bystander},
		{Racks{Primary: "aaaaaa", Secondary: "bbbbbb"}, "aaaaaa", Primary},
		{Racks{Primary: "aaaaaa", Secondary: "bbbbbb"}, "bbbbbb", Secondary},
		{Racks{Primary: "aaaaaa", Secondary: "bbbbbb"}, "cccccc", Bystander},
		{Racks{Primary: "aaaaaa", Secondary: "bbbbbb"}, "", Bystander},
	}
	for _, c := range cases {
		if got := RoleOf(c.v, c.rack); got != c.want {
			t.Errorf("RoleOf(%+v, %q) = %s, want %s", c.v, c.rack, got, c.want)
		}
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		r      Range
		lo, hi string // "a-b", "" for none
	}{
		{rg("192.0.2.100", "192.0.2.199"), "192.0.2.100-192.0.2.149", "192.0.2.150-192.0.2.199"},
		{rg("192.0.2.100", "192.0.2.200"), "192.0.2.100-192.0.2.150", "192.0.2.151-192.0.2.200"}, // odd: the primary has the middle
		{rg("192.0.2.10", "192.0.2.11"), "192.0.2.10-192.0.2.10", "192.0.2.11-192.0.2.11"},
		{rg("192.0.2.10", "192.0.2.10"), "192.0.2.10-192.0.2.10", ""},
		{rg("198.51.100.250", "198.51.101.5"), "198.51.100.250-198.51.100.255", "198.51.101.0-198.51.101.5"}, // across an octet
		{rg("0.0.0.0", "255.255.255.255"), "0.0.0.0-127.255.255.255", "128.0.0.0-255.255.255.255"},
		{rg("192.0.2.20", "192.0.2.10"), "192.0.2.20-192.0.2.10", ""}, // upside down: untouched
		{rg("2001:db8::1", "2001:db8::ff"), "2001:db8::1-2001:db8::ff", ""},
	}
	str := func(r Range, ok bool) string {
		if !ok {
			return ""
		}
		return fmt.Sprintf("%s-%s", r.Start, r.End)
	}
	for _, c := range cases {
		lo, hi, ok := Split(c.r)
		if str(lo, true) != c.lo || str(hi, ok) != c.hi {
			t.Errorf("Split(%v) = %s, %s; want %s, %s", c.r, str(lo, true), str(hi, ok), c.lo, c.hi)
		}
	}
}

func TestShareOf(t *testing.T) {
	dyn := []Range{rg("192.0.2.100", "192.0.2.199"), rg("192.0.2.220", "192.0.2.220")}
	low, high := rg("192.0.2.100", "192.0.2.149"), rg("192.0.2.150", "192.0.2.199")
	one := rg("192.0.2.220", "192.0.2.220")
	both := Racks{Primary: "aaaaaa", Secondary: "bbbbbb"}
	cases := []struct {
		name string
		v    Racks
		rack string
		want Share
	}{
		{"no primary: all of it", Racks{}, "cccccc", Share{Serve: true, Own: dyn}},
		{"primary alone: all of it", Racks{Primary: "aaaaaa"}, "aaaaaa", Share{Serve: true, Own: dyn}},
		{"bystander of a primary alone", Racks{Primary: "aaaaaa"}, "bbbbbb", Share{}},
		{"primary: lower halves", both, "aaaaaa", Share{Serve: true, Own: []Range{low, one}, Peer: []Range{high}}},
		{"secondary: upper halves", both, "bbbbbb", Share{Serve: true, Own: []Range{high}, Peer: []Range{low, one}}},
		{"bystander of a pair", both, "cccccc", Share{}},
	}
	for _, c := range cases {
		got := ShareOf(c.v, c.rack, dyn)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: ShareOf = %+v, want %+v", c.name, got, c.want)
		}
	}
	// The two shares of a pair never overlap, and together are the ranges.
	p, s := ShareOf(both, "aaaaaa", dyn), ShareOf(both, "bbbbbb", dyn)
	if fmt.Sprint(p.Own, p.Peer) != fmt.Sprint(s.Peer, s.Own) {
		t.Errorf("the primary's view %v/%v is not the secondary's mirrored %v/%v", p.Own, p.Peer, s.Own, s.Peer)
	}
}
