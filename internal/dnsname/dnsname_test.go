package dnsname

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for _, c := range []struct {
		name          string
		strict, loose bool
	}{
		{"ntp.example.org", true, true},
		{"ntp.example.org.", true, true},
		{"bmc_7.mgmt", false, true},
		{"a", true, true},
		{"", false, false},
		{".", false, false},
		{"a..b", false, false},
		{"-a.b", false, false},
		{"a-.b", false, false},
		{"a b", false, false},
		{"ünï.example", false, false},
		{strings.Repeat("a", 63) + ".b", true, true},
		{strings.Repeat("a", 64) + ".b", false, false},
		{strings.Repeat("a.", 126) + "ab", false, false}, // 254 characters
	} {
		if got := Valid(c.name); got != c.strict {
			t.Errorf("Valid(%q) = %v", c.name, got)
		}
		if got := ValidLoose(c.name); got != c.loose {
			t.Errorf("ValidLoose(%q) = %v", c.name, got)
		}
	}
}
