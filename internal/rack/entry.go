// Package rack is the rack's side of network boot: a cache of what it needs
// to answer a booting machine (MAC and SMBIOS UUID → machine, status, boot
// purpose), kept in memory and on local disk, fed by a stream from the
// region. The rack answers boots from this cache alone, so a known machine
// gets its per-MAC answer in microseconds even while the region is slow or
// down: the root cause of a deploying machine booting the enlistment
// environment in MAAS was a per-MAC answer that waited on the region.
package rack

import (
	"time"

	"github.com/anvilmetal/anvil/internal/dns"
	"github.com/anvilmetal/anvil/internal/machine"
)

// Entry is what the rack knows of one machine.
type Entry struct {
	SystemID string              `json:"system_id"`
	Hostname string              `json:"hostname"`
	Domain   string              `json:"domain"`
	Arch     string              `json:"architecture"`
	Status   machine.Status      `json:"status"`
	Purpose  machine.BootPurpose `json:"purpose"`
	MACs     []string            `json:"macs"`
	UUID     string              `json:"hardware_uuid,omitempty"`
	OSystem  string              `json:"osystem,omitempty"`
	Series   string              `json:"distro_series,omitempty"`
	Version  int64               `json:"version"`
	// Enrol is the machine's one-time enrolment secret, put on its own
	// boot's kernel command line only.
	Enrol string `json:"enrol,omitempty"`
	// KernelOpts are the kernel_opts of the machine's tags, by tag name,
	// added to the command line of the environments it boots.
	KernelOpts []string `json:"kernel_opts,omitempty"`
}

// EntryOf derives a machine's entry; the purpose is the domain's decision.
func EntryOf(m *machine.Machine) Entry {
	e := Entry{
		SystemID: m.SystemID, Hostname: m.Hostname, Domain: m.Domain, Arch: m.Architecture,
		Status: m.Status, Purpose: machine.BootPurposeOf(m), UUID: m.HardwareUUID,
		OSystem: m.OSystem, Series: m.DistroSeries, Version: m.Version, Enrol: m.EnrolSecret,
	}
	for _, i := range m.Interfaces {
		e.MACs = append(e.MACs, i.MAC)
	}
	return e
}

// Subnet is a network the rack may serve DHCP on, with its ranges.
type Subnet struct {
	CIDR    string   `json:"cidr"`
	Gateway string   `json:"gateway,omitempty"`
	DNS     []string `json:"dns,omitempty"`
	Domain  string   `json:"domain,omitempty"`
	// AllowDNS offers the racks' DNS to the subnet's clients (MAAS's
	// allow_dns); Search is the domain search list DHCP gives.
	AllowDNS     bool     `json:"allow_dns,omitempty"`
	Search       []string `json:"search,omitempty"`
	DHCP         bool     `json:"dhcp"`
	LeaseSeconds int      `json:"lease_seconds"`
	// Dynamic are the ranges this rack hands out: on a VLAN with a
	// primary and a secondary rack, its own half of each (see package
	// dhcpshare); Peer is the other rack's half, confirmed only to the
	// clients that rack leased it to.
	Dynamic  [][2]string `json:"dynamic,omitempty"`
	Peer     [][2]string `json:"peer,omitempty"`
	Reserved [][2]string `json:"reserved,omitempty"`
	// Role is this rack's for the subnet's VLAN when the VLAN names a
	// primary rack ("primary", "secondary" or "bystander", which serves
	// nothing), "" when it names none. The rack reports its leases on
	// subnets with a role, so the other rack never hands them out.
	Role string `json:"role,omitempty"`
	// Hosts are the subnet's fixed leases: known machines' addresses.
	Hosts []Host `json:"hosts,omitempty"`
}

// Host is a fixed lease: the MAC is always given IP.
type Host struct {
	MAC      string `json:"mac"`
	IP       string `json:"ip"`
	Hostname string `json:"hostname,omitempty"`
}

// Lease is a DHCP lease as racks and the region exchange them: a rack
// reports those it holds on subnets with a Role, and is streamed the
// other racks' on the subnets it shares.
type Lease struct {
	MAC     string    `json:"mac"`
	IP      string    `json:"ip"`
	Subnet  string    `json:"subnet"`
	Expires time.Time `json:"expires"`
}

// MaxLeaseReport is how many leases one report carries.
const MaxLeaseReport = 8000

// Change is one message of the region's stream: an entry to add or
// replace, or a machine to forget.
type Change struct {
	Upsert *Entry `json:"upsert,omitempty"`
	Delete string `json:"delete,omitempty"`
	Reset  bool   `json:"reset,omitempty"`  // a full snapshot follows; forget what is not in it
	Synced bool   `json:"synced,omitempty"` // the snapshot is complete
	// Subnets, when set, replaces the DHCP configuration.
	Subnets *[]Subnet `json:"subnets,omitempty"`
	// DNS, when set, replaces what the rack's DNS server answers from.
	DNS *dns.Data `json:"dns,omitempty"`
	// Leases, when set, replaces the other racks' leases on the subnets
	// this rack shares with them.
	Leases *[]Lease `json:"leases,omitempty"`
}
