package dnssec

import (
	"context"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// FuzzValidate: whatever an upstream sends, as the answer and as every
// key and DS lookup's answer, validation ends without panicking, and
// never calls unsigned data Secure.
func FuzzValidate(f *testing.F) {
	m := new(dns.Msg)
	m.SetQuestion("www.test.", dns.TypeA)
	a, _ := dns.NewRR("www.test. 300 IN A 192.0.2.1")
	sig, _ := dns.NewRR("www.test. 300 IN RRSIG A 13 2 300 20270101000000 20260101000000 1234 test. AAAA")
	m.Answer = []dns.RR{a, sig}
	b, _ := m.Pack()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		resp := new(dns.Msg)
		if resp.Unpack(b) != nil {
			return
		}
		asks := 0
		v, _ := New(func(context.Context, *dns.Msg) (*dns.Msg, error) {
			asks++
			return resp.Copy(), nil
		}, []string{"test. IN DS 1234 13 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D"}, func() time.Time { return time.Unix(1780000000, 0) })
		r, _ := v.Validate(context.Background(), resp)
		signed := false
		for _, rr := range append(resp.Answer, resp.Ns...) {
			signed = signed || rr.Header().Rrtype == dns.TypeRRSIG
		}
		if r == Secure && !signed && len(resp.Answer)+len(resp.Ns) > 0 {
			t.Fatalf("unsigned answer called secure: %v", resp)
		}
		if asks > 4*maxDepth {
			t.Fatalf("%d lookups for one answer", asks)
		}
	})
}
