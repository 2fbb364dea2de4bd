package api

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/fielderr"
	"github.com/anvilmetal/anvil/internal/network"
)

// linkModes are MAAS's link_subnet modes as the API spells them.
var linkModes = map[string]network.LinkMode{
	"AUTO": network.LinkAuto, "DHCP": network.LinkDHCP, "STATIC": network.LinkStatic, "LINK_UP": network.LinkUp,
}

// linkRequest is a link_subnet request, read as MAAS's InterfaceLinkForm
// reads it.
type linkRequest struct {
	link           network.Link
	force          bool
	defaultGateway bool
}

// parseLinkForm reads mode, subnet, ip_address, force and default_gateway.
// What a link may be on this interface is decided by applyLink and
// network.Validate afterwards.
func parseLinkForm(v url.Values, n *network.Network) (linkRequest, fielderr.Errors) {
	f := &ifaceForm{v: v}
	var lr linkRequest
	mode := strings.ToUpper(strings.TrimSpace(v.Get("mode")))
	switch m, ok := linkModes[mode]; {
	case mode == "":
		f.err.Add("mode", "This field is required.")
	case !ok:
		f.err.Add("mode", "'%s' is not a valid mode.  It should be one of: 'AUTO', 'DHCP', 'STATIC', 'LINK_UP'.", v.Get("mode"))
	default:
		lr.link.Mode = m
	}
	if s, ok := f.str("subnet"); ok && s != "" {
		id, err := strconv.Atoi(s)
		if _, known := n.Subnet(id); err != nil || !known {
			f.err.Add("subnet", "Select a valid choice. That choice is not one of the available choices.")
		} else {
			lr.link.SubnetID = id
		}
	}
	if s, ok := f.str("ip_address"); ok && s != "" {
		ip, err := netip.ParseAddr(s)
		if err != nil || ip.Zone() != "" {
			f.err.Add("ip_address", "Enter a valid IPv4 or IPv6 address.")
		} else {
			lr.link.IP = ip.Unmap()
		}
	}
	f.bool("force", &lr.force)
	f.bool("default_gateway", &lr.defaultGateway)
	if len(f.err) > 0 {
		return lr, f.err
	}
	switch lr.link.Mode {
	case network.LinkAuto, network.LinkStatic:
		if lr.link.SubnetID == 0 {
			f.err.Add("subnet", "This field is required.")
		}
	}
	if lr.link.Mode != network.LinkStatic && lr.link.IP.IsValid() {
		// MAAS ignores ip_address outside STATIC; dropping it keeps an AUTO
		// link's address for the allocator to choose.
		lr.link.IP = netip.Addr{}
	}
	if lr.defaultGateway {
		switch {
		case lr.link.Mode != network.LinkAuto && lr.link.Mode != network.LinkStatic:
			f.err.Add("default_gateway", "Cannot use in mode '%s'.", mode)
		case lr.link.SubnetID == 0:
			f.err.Add("default_gateway", "Subnet is required when default_gateway is True.")
		default:
			if s, _ := n.Subnet(lr.link.SubnetID); !s.Gateway.IsValid() {
				f.err.Add("default_gateway", "Cannot set as default gateway because subnet %s doesn't provide a gateway IP address.", s.CIDR)
			}
		}
	}
	return lr, f.err
}

// applyLink adds the requested link to i as MAAS's form does: a DHCP link
// when one exists, or a LINK_UP beside others, is refused unless forced;
// forcing (and LINK_UP) clears the interface's links first; a
// disconnected interface, or a forced link, takes the subnet's VLAN.
func applyLink(n *network.Network, i *network.Interface, lr linkRequest) fielderr.Errors {
	var e fielderr.Errors
	if lr.link.Mode == network.LinkDHCP && !lr.force {
		for _, l := range i.Links {
			if l.Mode == network.LinkDHCP {
				e.Add("mode", "Interface is already set to DHCP.")
				return e
			}
		}
	}
	if lr.link.Mode == network.LinkUp && !lr.force && len(i.Links) > 0 {
		e.Add("mode", "Cannot configure interface to link up (with no IP address) while other links are already configured. Specify force=True to override this behavior and delete all links.")
		return e
	}
	if lr.link.Mode == network.LinkUp || lr.force {
		i.Links = nil
	}
	if s, ok := n.Subnet(lr.link.SubnetID); ok && (i.VLANID == 0 || lr.force) && i.Type != network.VLANIf {
		i.VLANID = s.VLANID
	}
	i.Links = append(i.Links, lr.link)
	return e
}
