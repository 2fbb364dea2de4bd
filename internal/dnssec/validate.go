package dnssec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Result is what validation made of an answer.
type Result int

const (
	Insecure Result = iota
	Secure
	Bogus
)

func (r Result) String() string {
	return [...]string{"insecure", "secure", "bogus"}[r]
}

// RootAnchor is the root zone's KSK-2017 as IANA publishes it.
const RootAnchor = ". IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D"

// Exchange asks the upstream resolver m and returns its answer.
type Exchange func(ctx context.Context, m *dns.Msg) (*dns.Msg, error)

// Validator checks answers against its trust anchors, asking the
// upstream through Exchange for the keys and DS records on the way.
type Validator struct {
	ask     Exchange
	anchors map[string][]dns.RR // by zone: DS or DNSKEY records
	now     func() time.Time

	mu    sync.Mutex
	cache map[string]zoneKeys
}

// zoneKeys are a zone's verified keys, or the proof it is unsigned.
type zoneKeys struct {
	keys     []*dns.DNSKEY
	insecure bool
	expires  time.Time
}

// Bounds on what an upstream answer can make the validator do.
const (
	maxDepth = 24 // zones followed up the chain
	minCache = 5 * time.Second
	maxCache = time.Hour
)

// New returns a validator trusting anchors (DS or DNSKEY records in zone
// file syntax; none means RootAnchor).
func New(ask Exchange, anchors []string, now func() time.Time) (*Validator, error) {
	if len(anchors) == 0 {
		anchors = []string{RootAnchor}
	}
	if now == nil {
		now = time.Now
	}
	v := &Validator{ask: ask, anchors: map[string][]dns.RR{}, now: now, cache: map[string]zoneKeys{}}
	for _, a := range anchors {
		rr, err := dns.NewRR(a)
		if err != nil {
			return nil, fmt.Errorf("trust anchor %q: %w", a, err)
		}
		switch rr.(type) {
		case *dns.DS, *dns.DNSKEY:
		default:
			return nil, fmt.Errorf("trust anchor %q: not a DS or DNSKEY record", a)
		}
		z := dns.CanonicalName(rr.Header().Name)
		v.anchors[z] = append(v.anchors[z], rr)
	}
	return v, nil
}

// Validate judges resp, the upstream's answer (asked with DO set). The
// error says why an answer is Bogus.
func (v *Validator) Validate(ctx context.Context, resp *dns.Msg) (Result, error) {
	sets := rrsets(append(append([]dns.RR(nil), resp.Answer...), resp.Ns...))
	res := Secure
	if len(sets) == 0 {
		return Insecure, nil
	}
	for _, s := range sets {
		var r Result
		var err error
		if len(s.sigs) == 0 {
			r, err = v.unsigned(ctx, s.name, 0)
		} else {
			r, err = v.signed(ctx, s, 0)
		}
		if r == Bogus {
			return Bogus, fmt.Errorf("%s %s: %w", s.name, dns.TypeToString[s.typ], err)
		}
		if r == Insecure {
			res = Insecure
		}
	}
	return res, nil
}

// signed verifies s with its signer's keys; a signer below an insecure
// delegation makes it Insecure.
func (v *Validator) signed(ctx context.Context, s rrset, depth int) (Result, error) {
	signer := s.sigs[0].SignerName
	if !dns.IsSubDomain(signer, s.name) {
		return Bogus, fmt.Errorf("signed by %s, outside it", signer)
	}
	zk, err := v.keysFor(ctx, signer, depth+1)
	if err != nil {
		return Bogus, err
	}
	if zk.insecure {
		return Insecure, nil
	}
	if err := v.verify(s, zk.keys); err != nil {
		return Bogus, err
	}
	return Secure, nil
}

// verify checks that one of s's signatures, current, is by one of keys.
func (v *Validator) verify(s rrset, keys []*dns.DNSKEY) error {
	now := v.now()
	err := errors.New("no signature by a trusted key")
	for _, sig := range s.sigs {
		if !sig.ValidityPeriod(now) {
			err = fmt.Errorf("signature by key %d outside its validity (%s to %s)", sig.KeyTag,
				dns.TimeToString(sig.Inception), dns.TimeToString(sig.Expiration))
			continue
		}
		for _, k := range keys {
			if k.KeyTag() != sig.KeyTag || k.Algorithm != sig.Algorithm || !strings.EqualFold(k.Hdr.Name, sig.SignerName) {
				continue
			}
			if e := sig.Verify(k, s.rrs); e == nil {
				return nil
			} else {
				err = fmt.Errorf("signature by key %d: %w", sig.KeyTag, e)
			}
		}
	}
	return err
}

// unsigned judges unsigned data at name: Insecure only when name is
// below a delegation its signed parent provably does not sign.
func (v *Validator) unsigned(ctx context.Context, name string, depth int) (Result, error) {
	if depth > maxDepth {
		return Bogus, errors.New("chain too long")
	}
	resp, err := v.query(ctx, name, dns.TypeDS)
	if err != nil {
		return Bogus, err
	}
	if ds := rrsets(resp.Answer); len(ds) > 0 && ds[0].typ == dns.TypeDS {
		return Bogus, fmt.Errorf("unsigned, but %s has a DS record", name)
	}
	zone, proof := denialZone(resp, name)
	if zone == "" {
		return Bogus, errors.New("no zone answers for it")
	}
	zk, err := v.keysFor(ctx, zone, depth+1)
	if err != nil {
		return Bogus, err
	}
	if zk.insecure {
		return Insecure, nil
	}
	if zone != dns.CanonicalName(name) && v.deniesDS(proof, zk.keys, name) {
		return Insecure, nil // an unsigned delegation at name
	}
	return Bogus, fmt.Errorf("unsigned inside the signed zone %s", zone)
}

// keysFor returns zone's verified keys, or that it is provably unsigned.
func (v *Validator) keysFor(ctx context.Context, zone string, depth int) (zoneKeys, error) {
	zone = dns.CanonicalName(zone)
	if depth > maxDepth {
		return zoneKeys{}, errors.New("chain too long")
	}
	v.mu.Lock()
	zk, ok := v.cache[zone]
	v.mu.Unlock()
	if ok && v.now().Before(zk.expires) {
		return zk, nil
	}
	zk, err := v.fetchKeys(ctx, zone, depth)
	if err != nil {
		return zk, fmt.Errorf("keys of %s: %w", zone, err)
	}
	v.mu.Lock()
	v.cache[zone] = zk
	v.mu.Unlock()
	return zk, nil
}

func (v *Validator) fetchKeys(ctx context.Context, zone string, depth int) (zoneKeys, error) {
	if anchors, ok := v.anchors[zone]; ok {
		return v.dnskeys(ctx, zone, anchors)
	}
	if zone == "." {
		return zoneKeys{}, errors.New("no trust anchor")
	}
	resp, err := v.query(ctx, zone, dns.TypeDS)
	if err != nil {
		return zoneKeys{}, err
	}
	if sets := rrsets(resp.Answer); len(sets) > 0 && sets[0].typ == dns.TypeDS && sets[0].name == zone {
		ds := sets[0]
		if len(ds.sigs) == 0 {
			// An unsigned DS is trusted only from an unsigned parent.
			if r, err := v.unsigned(ctx, zone, depth+1); r != Insecure {
				return zoneKeys{}, fmt.Errorf("unsigned DS: %v", err)
			}
			return v.insecure(ds.rrs), nil
		}
		parent := ds.sigs[0].SignerName
		if !dns.IsSubDomain(parent, zone) || dns.CanonicalName(parent) == zone {
			return zoneKeys{}, fmt.Errorf("DS signed by %s, not a parent", parent)
		}
		pk, err := v.keysFor(ctx, parent, depth+1)
		if err != nil {
			return zoneKeys{}, err
		}
		if pk.insecure {
			return v.insecure(ds.rrs), nil
		}
		if err := v.verify(ds, pk.keys); err != nil {
			return zoneKeys{}, fmt.Errorf("DS: %w", err)
		}
		return v.dnskeys(ctx, zone, ds.rrs)
	}
	// No DS: the zone is unsigned if its parent proves so.
	parent, proof := denialZone(resp, zone)
	if parent == "" || parent == zone || !dns.IsSubDomain(parent, zone) {
		return zoneKeys{}, errors.New("no DS and no parent's denial of one")
	}
	pk, err := v.keysFor(ctx, parent, depth+1)
	if err != nil {
		return zoneKeys{}, err
	}
	if pk.insecure || v.deniesDS(proof, pk.keys, zone) {
		return v.insecure(resp.Ns), nil
	}
	return zoneKeys{}, errors.New("no DS, and no proof of its absence")
}

// dnskeys fetches zone's DNSKEY RRset and trusts it when a key matching
// one of the DS or DNSKEY records in trusted signs it.
func (v *Validator) dnskeys(ctx context.Context, zone string, trusted []dns.RR) (zoneKeys, error) {
	resp, err := v.query(ctx, zone, dns.TypeDNSKEY)
	if err != nil {
		return zoneKeys{}, err
	}
	var set *rrset
	for _, s := range rrsets(resp.Answer) {
		if s.typ == dns.TypeDNSKEY && s.name == zone {
			set = &s
		}
	}
	if set == nil {
		return zoneKeys{}, errors.New("no DNSKEY records")
	}
	var keys, entry []*dns.DNSKEY
	for _, rr := range set.rrs {
		k := rr.(*dns.DNSKEY)
		keys = append(keys, k)
		if matches(k, trusted) {
			entry = append(entry, k)
		}
	}
	if len(entry) == 0 {
		return zoneKeys{}, errors.New("no DNSKEY matches the DS records")
	}
	if err := v.verify(*set, entry); err != nil {
		return zoneKeys{}, fmt.Errorf("DNSKEY: %w", err)
	}
	return zoneKeys{keys: keys, expires: v.expiry(set.rrs)}, nil
}

func matches(k *dns.DNSKEY, trusted []dns.RR) bool {
	for _, t := range trusted {
		switch t := t.(type) {
		case *dns.DNSKEY:
			if strings.EqualFold(t.PublicKey, k.PublicKey) && t.Algorithm == k.Algorithm && t.Flags == k.Flags {
				return true
			}
		case *dns.DS:
			if d := k.ToDS(t.DigestType); d != nil && d.KeyTag == t.KeyTag && strings.EqualFold(d.Digest, t.Digest) {
				return true
			}
		}
	}
	return false
}

func (v *Validator) insecure(rrs []dns.RR) zoneKeys {
	return zoneKeys{insecure: true, expires: v.expiry(rrs)}
}

// expiry is when what rrs proved is asked again: their least TTL, within
// bounds.
func (v *Validator) expiry(rrs []dns.RR) time.Time {
	ttl := maxCache
	for _, rr := range rrs {
		ttl = min(ttl, time.Duration(rr.Header().Ttl)*time.Second)
	}
	return v.now().Add(max(ttl, minCache))
}

func (v *Validator) query(ctx context.Context, name string, t uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.CanonicalName(name), t)
	m.SetEdns0(4096, true)
	m.CheckingDisabled = true // the checking is ours
	resp, err := v.ask(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("ask %s %s: %w", name, dns.TypeToString[t], err)
	}
	if resp.Rcode != dns.RcodeSuccess && resp.Rcode != dns.RcodeNameError {
		return nil, fmt.Errorf("ask %s %s: %s", name, dns.TypeToString[t], dns.RcodeToString[resp.Rcode])
	}
	return resp, nil
}
