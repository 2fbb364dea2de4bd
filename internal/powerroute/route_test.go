package powerroute

import (
	"net/netip"
	"reflect"
	"testing"
	"time"
)

func nets(ss ...string) []netip.Prefix {
	out, err := ParseNetworks(ss)
	if err != nil {
		panic(err)
	}
	return out
}

func TestHost(t *testing.T) {
	for key, want := range map[string]string{
		"ipmi://192.0.2.3:623":                           "192.0.2.3",
		"ipmi://[2001:db8::3]:623":                       "2001:db8::3",
		"redfish://https://192.0.2.4:8443":               "192.0.2.4",
		"redfish://https://bmc.example":                  "bmc.example",
		"webhook://http://user@198.51.100.9:8080/on?x=1": "198.51.100.9",
		"webhook://http://[2001:db8::9]/on":              "2001:db8::9",
		"":                                               "",
		"manual":                                         "",
	} {
		if got := Host(key); got != want {
			t.Errorf("Host(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestReaches(t *testing.T) {
	lowHalf, highHalf := nets("192.0.2.0/25"), nets("192.0.2.128/25")
	for _, c := range []struct {
		name string
		nets []netip.Prefix
		key  string
		want bool
	}{
		{"inside", lowHalf, "ipmi://192.0.2.3:623", true},
		{"other half", highHalf, "ipmi://192.0.2.3:623", false},
		{"edge of the network", highHalf, "ipmi://192.0.2.128:623", true},
		{"broadcast end", lowHalf, "ipmi://192.0.2.127:623", true},
		{"no networks", nil, "ipmi://192.0.2.3:623", false},
		{"URL endpoint", nets("198.18.0.0/24"), "redfish://https://198.18.0.7:8443", true},
		{"IPv6 BMC in an IPv4 network", lowHalf, "ipmi://[2001:db8::3]:623", false},
		{"IPv6 network", nets("2001:db8::/64"), "ipmi://[2001:db8::3]:623", true},
		{"link-local with a zone", nets("::/0"), "ipmi://[fe80::1%br0]:623", true},
		{"IPv4-mapped address", lowHalf, "ipmi://[::ffff:192.0.2.3]:623", true},
		{"host name, specific networks", lowHalf, "redfish://https://bmc.example", false},
		{"host name, whole family", nets("0.0.0.0/0"), "redfish://https://bmc.example", true},
		{"manual power needs no network", nil, "", true},
	} {
		if got := Reaches(c.nets, c.key); got != c.want {
			t.Errorf("%s: Reaches(%v, %q) = %v", c.name, c.nets, c.key, got)
		}
	}
}

func TestClaimable(t *testing.T) {
	n := nets("192.0.2.0/24")
	bad := map[string]bool{"192.0.2.9": true}
	for key, want := range map[string]bool{
		"ipmi://192.0.2.8:623":    true,
		"ipmi://192.0.2.9:623":    false, // the probe failed lately
		"ipmi://198.51.100.9:623": false,
	} {
		if got := Claimable(n, bad, key); got != want {
			t.Errorf("Claimable(%q) = %v", key, got)
		}
	}
}

func TestRoute(t *testing.T) {
	now := time.Date(2026, 12, 4, 2, 0, 0, 0, time.UTC)
	racks := []Rack{
		{ID: "a1", Networks: nets("192.0.2.0/25"), Seen: now.Add(-time.Second)},
		{ID: "a2", Networks: nets("192.0.2.0/25"), Seen: now.Add(-time.Minute)}, // dead
		{ID: "b", Networks: nets("192.0.2.128/25"), Seen: now},
		{ID: "all", Networks: nets("0.0.0.0/0"), Seen: now.Add(-2 * time.Hour)},
	}
	live := Live(racks, now, 30*time.Second)
	if ids := Serving(live, ""); !reflect.DeepEqual(ids, []string{"a1", "b"}) {
		t.Fatalf("live racks: %v", ids)
	}
	for key, want := range map[string][]string{
		"ipmi://192.0.2.3:623":    {"a1"},
		"ipmi://192.0.2.200:623":  {"b"},
		"ipmi://198.51.100.3:623": nil,
	} {
		if got := Serving(live, key); !reflect.DeepEqual(got, want) {
			t.Errorf("Serving(%q) = %v, want %v", key, got, want)
		}
	}
	if err := Route(live, "ipmi://192.0.2.3:623"); err != nil {
		t.Errorf("reachable BMC refused: %v", err)
	}
	err := Route(live, "ipmi://198.51.100.3:623")
	if err == nil || err.Error() != "no rack reaches BMC 198.51.100.3" {
		t.Errorf("unreachable BMC: %v", err)
	}
	// Only the rack that died declared 0.0.0.0/0: names reach no one.
	if err := Route(live, "redfish://https://bmc.example"); err == nil {
		t.Error("a host name routed without a rack declaring a whole family")
	}
}

func TestParseNetworks(t *testing.T) {
	got, err := ParseNetworks([]string{"192.0.2.77/25", " 192.0.2.0/25", "198.51.100.4", "::ffff:198.18.0.0/112", ""})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"192.0.2.0/25", "198.51.100.4/32", "198.18.0.0/16"}; !reflect.DeepEqual(Strings(got), want) {
		t.Fatalf("ParseNetworks: %v, want %v", Strings(got), want)
	}
	for _, bad := range []string{"192.0.2.0/33", "bmc.example", "fe80::1%eth0", "192.0.2.0/24/1"} {
		if _, err := ParseNetworks([]string{bad}); err == nil {
			t.Errorf("ParseNetworks(%q) accepted", bad)
		}
	}
	many := make([]string, MaxNetworks+1)
	for i := range many {
		many[i] = netip.AddrFrom4([4]byte{10, 0, byte(i), 0}).String() + "/24"
	}
	if _, err := ParseNetworks(many); err == nil {
		t.Error("more than MaxNetworks accepted")
	}
}

func TestReachesAll(t *testing.T) {
	for _, c := range []struct {
		nets []netip.Prefix
		want bool
	}{
		{nets("0.0.0.0/0", "::/0"), true},
		{nets("0.0.0.0/0"), false}, // not IPv6 BMCs
		{nets("0.0.0.0/1", "128.0.0.0/1", "::/0"), false},
		{nil, false},
	} {
		if got := ReachesAll(c.nets); got != c.want {
			t.Errorf("ReachesAll(%v) = %v", c.nets, got)
		}
	}
}

func TestNarrow(t *testing.T) {
	for _, c := range []struct {
		name                     string
		declared, allowed        []netip.Prefix
		wantKept, wantBeyondNets []netip.Prefix
	}{
		{"everything declared, one network granted", nets("0.0.0.0/0", "::/0"), nets("192.0.2.0/24"), nets("192.0.2.0/24"), nets("0.0.0.0/0", "::/0")},
		{"inside the grant", nets("192.0.2.0/25"), nets("192.0.2.0/24"), nets("192.0.2.0/25"), nil},
		{"equal to the grant", nets("192.0.2.0/24"), nets("192.0.2.0/24"), nets("192.0.2.0/24"), nil},
		{"another site's network", nets("198.51.100.0/24"), nets("192.0.2.0/24"), nil, nets("198.51.100.0/24")},
		{"nothing granted", nets("192.0.2.0/24"), nil, nil, nets("192.0.2.0/24")},
		{"two grants in one declared network", nets("192.0.0.0/8"), nets("192.0.2.0/24", "192.18.0.0/16", "198.51.100.0/24"), nets("192.0.2.0/24", "192.18.0.0/16"), nets("192.0.0.0/8")},
		{"a grant of everything", nets("192.0.2.0/24", "2001:db8::/64"), nets("0.0.0.0/0", "::/0"), nets("192.0.2.0/24", "2001:db8::/64"), nil},
		{"families do not mix", nets("::/0"), nets("0.0.0.0/0"), nil, nets("::/0")},
	} {
		kept, beyond := Narrow(c.declared, c.allowed)
		if !reflect.DeepEqual(kept, c.wantKept) || !reflect.DeepEqual(beyond, c.wantBeyondNets) {
			t.Errorf("%s: Narrow = %v, beyond %v; want %v, beyond %v", c.name, kept, beyond, c.wantKept, c.wantBeyondNets)
		}
	}
}
