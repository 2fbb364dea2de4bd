package dns

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/miekg/dns"

	"github.com/anvilmetal/anvil/internal/dnssec"
)

// forwardTimeout bounds one forwarded query with its validation.
const forwardTimeout = 5 * time.Second

// forward asks the upstream resolvers in turn for client; nil if none
// answered, or if client (or everyone) has as many queries in flight as
// the limits allow: a dead upstream then costs a bounded number of
// sockets, and the rest are answered SERVFAIL at once.
// With validation on, the answer is checked (unless the client set CD,
// asking for it unchecked): Bogus is SERVFAIL, Secure sets AD, Insecure
// passes without it.
func (s *Server) forward(st *state, r *dns.Msg, client netip.Addr) *dns.Msg {
	done, ok := s.g.fwd.Take(clientPrefix(client))
	if !ok {
		return nil
	}
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), forwardTimeout)
	defer cancel()
	q := r.Copy()
	check := st.validator != nil && !r.CheckingDisabled
	clientDO := r.IsEdns0() != nil && r.IsEdns0().Do()
	if check {
		if o := q.IsEdns0(); o != nil {
			o.SetDo()
		} else {
			q.SetEdns0(maxUDP, true)
		}
		q.CheckingDisabled = true
	}
	resp, err := exchange(ctx, s.fwd, st.upstream, q)
	if err != nil {
		s.log.Debug("upstream dns failed", "err", err)
		return nil
	}
	resp.Id = r.Id
	if !check {
		return resp
	}
	res, err := st.validator.Validate(ctx, resp)
	if res == dnssec.Bogus {
		s.log.Info("dnssec: bogus answer refused", "question", r.Question[0].String(), "err", err)
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeServerFailure)
		m.RecursionAvailable = true
		return m
	}
	resp.AuthenticatedData = res == dnssec.Secure
	resp.CheckingDisabled = false
	if !clientDO {
		stripDNSSEC(resp)
	}
	return resp
}

// exchange asks each upstream in turn until one answers.
func exchange(ctx context.Context, c *dns.Client, upstream []string, q *dns.Msg) (*dns.Msg, error) {
	err := errors.New("no upstream")
	for _, up := range upstream {
		resp, _, e := c.ExchangeContext(ctx, q, up)
		if e == nil && resp.Truncated {
			tc := *c
			tc.Net = "tcp"
			resp, _, e = tc.ExchangeContext(ctx, q, up)
		}
		if e == nil {
			return resp, nil
		}
		err = fmt.Errorf("%s: %w", up, e)
	}
	return nil, err
}

// newValidator validates with the server's trust anchors, asking the
// upstreams for keys.
func (s *Server) newValidator(upstream []string) *dnssec.Validator {
	v, err := dnssec.New(func(ctx context.Context, m *dns.Msg) (*dns.Msg, error) {
		return exchange(ctx, s.fwd, upstream, m)
	}, s.anchors, nil)
	if err != nil {
		// anchors are checked by SetTrustAnchors; the root's always parse
		s.log.Error("dnssec validator", "err", err)
		return nil
	}
	return v
}

// SetTrustAnchors replaces the root's trust anchor with anchors (DS or
// DNSKEY records in zone file syntax), for a site with its own signed
// zones, or a test's.
func (s *Server) SetTrustAnchors(anchors []string) error {
	if _, err := dnssec.New(nil, anchors, nil); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.anchors = anchors
	st := *s.st.Load()
	if st.validator != nil {
		st.validator = s.newValidator(st.upstream)
	}
	s.st.Store(&st)
	return nil
}

// stripDNSSEC drops the records a client that did not set DO did not
// ask for (RFC 4035 3.2.1).
func stripDNSSEC(m *dns.Msg) {
	keep := func(rrs []dns.RR) []dns.RR {
		out := rrs[:0]
		for _, rr := range rrs {
			switch rr.Header().Rrtype {
			case dns.TypeRRSIG, dns.TypeNSEC, dns.TypeNSEC3:
				continue
			}
			out = append(out, rr)
		}
		return out
	}
	m.Answer, m.Ns = keep(m.Answer), keep(m.Ns)
	if o := m.IsEdns0(); o != nil {
		o.SetDo(false)
	}
}
