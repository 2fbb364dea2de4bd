package agentapi

import (
	"strings"
	"testing"
	"time"
)

func TestSighting(t *testing.T) {
	const key = "ck:tk:secret"
	at := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	v := Sign(key, "52:54:00:AA:00:01", "192.0.2.7", at)
	s, err := ParseSighting(v)
	if err != nil {
		t.Fatal(err)
	}
	if s.Consumer != "ck" || s.Token != "tk" || s.MAC != "52:54:00:aa:00:01" || !s.At.Equal(at.Truncate(time.Second)) {
		t.Fatalf("parsed %+v", s)
	}
	if strings.Contains(v, "secret") {
		t.Fatalf("the secret is in the sighting: %s", v)
	}
	for _, c := range []struct {
		secret, addr string
		ok           bool
	}{
		{"secret", "192.0.2.7", true},
		{"secret", "::ffff:192.0.2.7", true},
		{"secret", "192.0.2.8", false},
		{"other", "192.0.2.7", false},
		{"", "192.0.2.7", false},
	} {
		if got := s.Valid(c.secret, c.addr); got != c.ok {
			t.Errorf("Valid(%q, %q) = %v", c.secret, c.addr, got)
		}
	}
	// Tampering with any part breaks it.
	f := strings.Split(v, ".")
	for i, bad := range []string{"cx", "tx", "1767322999", "525400aa0002"} {
		g := append([]string(nil), f...)
		g[i] = bad
		if s, err := ParseSighting(strings.Join(g, ".")); err == nil && s.Valid("secret", "192.0.2.7") {
			t.Errorf("field %d changed to %q still valid", i, bad)
		}
	}
	for _, junk := range []string{"", "a.b.c", "a.b.x.525400aa0001.sig", "a.b.1.zz.sig", "a.b.1.525400aa0001.!!", strings.Repeat("a", 300)} {
		if _, err := ParseSighting(junk); err == nil {
			t.Errorf("%q parsed", junk)
		}
	}
	if Sign("nokey", "52:54:00:aa:00:01", "192.0.2.7", at) != "" || Sign(key, "nomac", "192.0.2.7", at) != "" || Sign(key, "52:54:00:aa:00:01", "", at) != "" {
		t.Error("signed without a key, a MAC or an address")
	}
}
