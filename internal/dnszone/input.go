package dnszone

import "net/netip"

// Input is everything a zone is made from, as plain data: what the region
// sends its racks. A TTL of 0 inherits from the level above (record,
// resource or host, domain, DefaultTTL).
type Input struct {
	Serial     uint32       `json:"serial"`
	DefaultTTL int          `json:"default_ttl"`
	Domains    []Domain     `json:"domains"`
	Hosts      []Host       `json:"hosts"`
	Resources  []Resource   `json:"resources"`
	Subnets    []Subnet     `json:"subnets"`
	NS         []NameServer `json:"ns"`
}

// Domain is a DNS domain. A domain that is not authoritative gets no zone.
type Domain struct {
	Name          string `json:"name"`
	Authoritative bool   `json:"authoritative"`
	TTL           int    `json:"ttl,omitempty"`
}

// Host is a machine or device: its boot interface's addresses are named
// host.domain and its other interfaces' iface.host.domain, as in MAAS.
type Host struct {
	Name   string     `json:"name"`
	Domain string     `json:"domain"`
	TTL    int        `json:"ttl,omitempty"` // the machine's address_ttl
	Addrs  []HostAddr `json:"addrs"`
}

// HostAddr is an address and the interface it is on.
type HostAddr struct {
	Iface string     `json:"iface"`
	Boot  bool       `json:"boot"`
	IP    netip.Addr `json:"ip"`
}

// Resource is a DNS resource: a name in a domain with addresses and
// records.
type Resource struct {
	Name    string       `json:"name"` // "@" is the domain itself
	Domain  string       `json:"domain"`
	TTL     int          `json:"ttl,omitempty"` // its address_ttl
	IPs     []netip.Addr `json:"ips,omitempty"`
	Records []Record     `json:"records,omitempty"`
}

// Record is one DNS resource record's type and data, as MAAS stores them.
type Record struct {
	Type string `json:"type"`
	Data string `json:"data"`
	TTL  int    `json:"ttl,omitempty"`
}

// Subnet is a managed subnet: its reverse zone follows its rdns_mode.
type Subnet struct {
	CIDR netip.Prefix `json:"cidr"`
	RDNS RDNS         `json:"rdns_mode"`
}

// NameServer is a rack that serves the zones: every zone's NS names it.
type NameServer struct {
	Name string     `json:"name"` // absolute or relative to the default domain
	IP   netip.Addr `json:"ip"`
}
