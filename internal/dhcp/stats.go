package dhcp

import (
	"maps"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// Drop reasons, the label values of Stats.Drops. Malformed packets and
// policy decisions ("this request is not for us") are both drops: the
// client got no answer, and an operator wants to know why.
const (
	DropParse        = "parse"        // not a DHCPv4 packet at all
	DropOversized    = "oversized"    // larger than maxPacket
	DropWrongOp      = "wrong_op"     // a BOOTREPLY sent to the server
	DropBadHLen      = "bad_hlen"     // hardware address length invalid for its type
	DropNoMsgType    = "no_msg_type"  // BOOTP or garbage: no option 53
	DropBadMsgType   = "bad_msg_type" // a type a server never receives
	DropNoSubnet     = "no_subnet"    // no configured subnet for giaddr / interface
	DropDisabled     = "subnet_disabled"
	DropPoolFull     = "pool_exhausted"
	DropStaticInUse  = "static_in_use" // a static host's address is leased to another MAC
	DropOtherServer  = "other_server"  // REQUEST naming another server's offer
	DropStoreError   = "store_error"
	DropNotPXE       = "not_pxe"      // proxy mode: not a network-boot client
	DropUnknownArch  = "unknown_arch" // proxy mode: no boot file for this client
	DropNotForUs     = "not_for_us"   // RELEASE/DECLINE of an address we do not lease it
	DropSendError    = "send_error"
	DropNoServerAddr = "no_server_addr" // no address to put in option 54
	DropPeerUnknown  = "peer_unknown"   // REQUEST for the partner's address, not known leased to this client
)

// Stats is a snapshot of the server's counters since it was created.
type Stats struct {
	Received uint64
	Offers   uint64
	Acks     uint64 // includes ACKs to INFORM
	Naks     uint64
	Releases uint64
	Declines uint64
	Drops    map[string]uint64 // by reason, see the Drop* constants
}

// EventKind is what happened to one request.
type EventKind string

const (
	EventOffer   EventKind = "offer"
	EventAck     EventKind = "ack"
	EventNak     EventKind = "nak"
	EventRelease EventKind = "release"
	EventDecline EventKind = "decline"
	EventDrop    EventKind = "drop"
)

// Event describes one handled request, for the Observer.
type Event struct {
	Kind     EventKind
	MAC      net.HardwareAddr // nil if the packet did not parse
	IP       netip.Addr       // address offered, acked, released or declined
	Subnet   netip.Prefix     // zero if none was selected
	Relay    netip.Addr       // giaddr, zero when not relayed
	BootFile string           // boot file or URL sent, "" if none
	Arch     int              // option 93, ArchUnknown if absent
	Static   bool             // MAC is a configured StaticHost
	Reason   string           // drop reason, or why a NAK was sent
}

// Observer is called synchronously for every handled request (including
// drops), from the goroutine that handled it: it must not block. Anvil
// turns these into machine events and its list of unknown MACs.
type Observer func(Event)

type counters struct {
	received, offers, acks, naks, releases, declines atomic.Uint64

	mu    sync.Mutex
	drops map[string]uint64
}

func (c *counters) count(e *Event) {
	switch e.Kind {
	case EventOffer:
		c.offers.Add(1)
	case EventAck:
		c.acks.Add(1)
	case EventNak:
		c.naks.Add(1)
	case EventRelease:
		c.releases.Add(1)
	case EventDecline:
		c.declines.Add(1)
	case EventDrop:
		c.mu.Lock()
		if c.drops == nil {
			c.drops = map[string]uint64{}
		}
		c.drops[e.Reason]++
		c.mu.Unlock()
	}
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	drops := maps.Clone(c.drops)
	c.mu.Unlock()
	if drops == nil {
		drops = map[string]uint64{}
	}
	return Stats{
		Received: c.received.Load(), Offers: c.offers.Load(), Acks: c.acks.Load(),
		Naks: c.naks.Load(), Releases: c.releases.Load(), Declines: c.declines.Load(),
		Drops: drops,
	}
}
