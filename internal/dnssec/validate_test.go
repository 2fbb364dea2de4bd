package dnssec

import (
	"context"
	"crypto"
	"errors"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// signer is a zone's key pair (one key signs everything: KSK and ZSK at
// once, which validation allows).
type signer struct {
	key  *dns.DNSKEY
	priv crypto.Signer
}

func newSigner(t *testing.T, zone string) signer {
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 300},
		Flags: 257, Protocol: 3, Algorithm: dns.ECDSAP256SHA256}
	priv, err := k.Generate(256)
	if err != nil {
		t.Fatal(err)
	}
	return signer{k, priv.(crypto.Signer)}
}

var now = time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)

func (s signer) sign(t *testing.T, rrs ...dns.RR) []dns.RR {
	return s.signAt(t, now.Add(-time.Hour), now.Add(24*time.Hour), rrs...)
}

func (s signer) signAt(t *testing.T, from, to time.Time, rrs ...dns.RR) []dns.RR {
	sig := &dns.RRSIG{Hdr: dns.RR_Header{Ttl: rrs[0].Header().Ttl}, KeyTag: s.key.KeyTag(), SignerName: s.key.Hdr.Name,
		Algorithm: s.key.Algorithm, Inception: uint32(from.Unix()), Expiration: uint32(to.Unix())}
	if err := sig.Sign(s.priv, rrs); err != nil {
		t.Fatal(err)
	}
	return append(append([]dns.RR(nil), rrs...), sig)
}

func rr(t *testing.T, s string) dns.RR {
	r, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// upstream answers from a table by name and type, counting questions.
type upstream struct {
	answers map[string]*dns.Msg
	asked   map[string]int
}

func key(name string, t uint16) string { return dns.CanonicalName(name) + "/" + dns.TypeToString[t] }

func (u *upstream) ask(_ context.Context, m *dns.Msg) (*dns.Msg, error) {
	k := key(m.Question[0].Name, m.Question[0].Qtype)
	u.asked[k]++
	if a, ok := u.answers[k]; ok {
		return a.Copy(), nil
	}
	return nil, errors.New("no answer for " + k)
}

func msg(answer []dns.RR, ns []dns.RR) *dns.Msg {
	m := new(dns.Msg)
	m.Response = true
	m.Answer, m.Ns = answer, ns
	return m
}

// site is the anchor zone test. with www signed, a signed child
// sub.test. (DS in the parent), an unsigned delegation plain.test.
// (NSEC denying its DS), all as an upstream resolver would give them.
func site(t *testing.T) (*upstream, []string, map[string]signer) {
	root, sub := newSigner(t, "test."), newSigner(t, "sub.test.")
	u := &upstream{answers: map[string]*dns.Msg{}, asked: map[string]int{}}
	u.answers[key("test.", dns.TypeDNSKEY)] = msg(root.sign(t, root.key), nil)
	u.answers[key("sub.test.", dns.TypeDNSKEY)] = msg(sub.sign(t, sub.key), nil)
	ds := sub.key.ToDS(dns.SHA256)
	ds.Hdr.Ttl = 300
	u.answers[key("sub.test.", dns.TypeDS)] = msg(root.sign(t, ds), nil)
	nsec := rr(t, "plain.test. 300 IN NSEC sub.test. NS RRSIG NSEC")
	u.answers[key("plain.test.", dns.TypeDS)] = msg(nil, append(root.sign(t, rr(t, "test. 300 IN SOA ns.test. h.test. 1 2 3 4 60")), root.sign(t, nsec)...))
	u.answers[key("www.plain.test.", dns.TypeDS)] = msg(nil, []dns.RR{rr(t, "plain.test. 300 IN SOA ns.plain.test. h.plain.test. 1 2 3 4 60")})
	nsecWWW := rr(t, "www.test. 300 IN NSEC zz.test. A RRSIG NSEC")
	u.answers[key("www.test.", dns.TypeDS)] = msg(nil, append(root.sign(t, rr(t, "test. 300 IN SOA ns.test. h.test. 1 2 3 4 60")), root.sign(t, nsecWWW)...))
	anchor := root.key.ToDS(dns.SHA256).String()
	return u, []string{anchor}, map[string]signer{"test.": root, "sub.test.": sub}
}

func TestValidate(t *testing.T) {
	u, anchors, keys := site(t)
	root, sub := keys["test."], keys["sub.test."]
	other := newSigner(t, "test.") // same name, a key nobody trusts
	www := rr(t, "www.test. 300 IN A 192.0.2.1")
	tampered := rr(t, "www.test. 300 IN A 192.0.2.66")
	sigOnly := root.sign(t, www)[1]
	cases := []struct {
		name string
		resp *dns.Msg
		want Result
	}{
		{"signed by the anchor's zone", msg(root.sign(t, www), nil), Secure},
		{"signed by a child with a DS", msg(sub.sign(t, rr(t, "a.sub.test. 300 IN A 192.0.2.2")), nil), Secure},
		{"data changed under its signature", msg([]dns.RR{tampered, sigOnly}, nil), Bogus},
		{"signed by an untrusted key", msg(other.sign(t, www), nil), Bogus},
		{"signature expired", msg(root.signAt(t, now.Add(-48*time.Hour), now.Add(-time.Hour), www), nil), Bogus},
		{"signature not yet valid", msg(root.signAt(t, now.Add(time.Hour), now.Add(48*time.Hour), www), nil), Bogus},
		{"signature stripped in a signed zone", msg([]dns.RR{www}, nil), Bogus},
		{"unsigned below an unsigned delegation", msg([]dns.RR{rr(t, "www.plain.test. 300 IN A 192.0.2.3")}, nil), Insecure},
		{"signer not above the name", msg(sub.sign(t, rr(t, "www.test. 300 IN A 192.0.2.4")), nil), Bogus},
		{"no trust anchor for the signer", msg(newSigner(t, "elsewhere.").sign(t, rr(t, "x.elsewhere. 300 IN A 192.0.2.5")), nil), Bogus},
	}
	for _, c := range cases {
		v, err := New(u.ask, anchors, func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		if got, err := v.Validate(t.Context(), c.resp); got != c.want {
			t.Errorf("%s: %s (%v), want %s", c.name, got, err, c.want)
		}
	}
}

// TestKeysCached: validated keys are asked once while their TTL lasts,
// and again after it.
func TestKeysCached(t *testing.T) {
	u, anchors, keys := site(t)
	clock := now
	v, _ := New(u.ask, anchors, func() time.Time { return clock })
	resp := msg(keys["sub.test."].sign(t, rr(t, "a.sub.test. 300 IN A 192.0.2.2")), nil)
	for range 3 {
		if r, err := v.Validate(t.Context(), resp); r != Secure {
			t.Fatalf("%s %v", r, err)
		}
	}
	if n := u.asked[key("sub.test.", dns.TypeDNSKEY)] + u.asked[key("test.", dns.TypeDNSKEY)] + u.asked[key("sub.test.", dns.TypeDS)]; n != 3 {
		t.Fatalf("asked %v; want each key and DS once", u.asked)
	}
	clock = clock.Add(301 * time.Second)
	v.Validate(t.Context(), resp)
	if n := u.asked[key("sub.test.", dns.TypeDNSKEY)]; n != 2 {
		t.Fatalf("after the TTL, sub.test. DNSKEY asked %d times; want 2", n)
	}
}

func TestAnchorsRefused(t *testing.T) {
	for _, a := range []string{"not a record", "test. 300 IN A 192.0.2.1"} {
		if _, err := New(nil, []string{a}, nil); err == nil {
			t.Errorf("anchor %q taken", a)
		}
	}
	if v, err := New(nil, nil, nil); err != nil || len(v.anchors["."]) != 1 || v.anchors["."][0].(*dns.DS).KeyTag != 20326 {
		t.Errorf("default anchor: %v %v", v, err)
	}
}
