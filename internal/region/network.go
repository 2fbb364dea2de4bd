package region

import (
	"context"
	"fmt"
	"github.com/anvilmetal/anvil/internal/device"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/anvilmetal/anvil/internal/fielderr"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

// A deployment applies the machine's network model: when it starts, the
// AUTO links get their addresses (race-free: the store's unique index
// decides) after a dry render has shown the model works; the task carries
// the rendered network-config; release, an aborted or failed deployment
// give the AUTO addresses back (STATIC ones stay).

// machineNetwork is a machine's model with the owner's gateway choices.
func (s *Service) machineNetwork(ctx context.Context, systemID string) (*network.Network, *network.Machine, error) {
	n, nm, err := s.Store.MachineNetwork(ctx, systemID)
	if err != nil {
		return nil, nil, err
	}
	v4, v6, err := s.Store.DefaultGatewayLinks(ctx, systemID)
	if err != nil {
		return nil, nil, err
	}
	nm.GatewayLink4, nm.GatewayLink6 = int(v4), int(v6)
	return n, nm, nil
}

// configured says whether the model asks for more than what a deployed
// machine gets without one, DHCP on the boot interface: then the
// rendered config is sent; otherwise the agent's default stands (which
// names the boot NIC boot0).
func configured(m *network.Machine) bool {
	for _, i := range m.Interfaces {
		if i.Type != network.Physical {
			return true
		}
		for _, l := range i.Links {
			if l.Mode != network.LinkDHCP || i.ID != m.BootInterface {
				return true
			}
		}
	}
	return false
}

// rackDNSFresh is how recently a rack must have followed the boot stream
// for machines to be given its DNS address.
const rackDNSFresh = 10 * time.Minute

// renderOptions are the deployed machine's DNS: the search list MAAS
// gives (its own domain, then the other authoritative ones) and the
// addresses the racks following the region answer DNS at.
func (s *Service) renderOptions(ctx context.Context, m machine.Machine) (network.RenderOptions, error) {
	var o network.RenderOptions
	doms, err := s.Store.ListDomains(ctx)
	if err != nil {
		return o, err
	}
	o.SearchDomains = store.DNSSearch(doms, m.Domain)
	racks, err := s.Store.ListRacks(ctx)
	if err != nil {
		return o, err
	}
	for _, rk := range racks {
		if s.Now().Sub(rk.Seen) > rackDNSFresh {
			continue
		}
		// Only addresses in subnets the rack serves: a rack names its
		// own DNS addresses, and machines must not be sent elsewhere.
		for _, a := range rk.DNSAddresses() {
			if !slices.Contains(o.DNSServers, a) {
				o.DNSServers = append(o.DNSServers, a)
			}
		}
	}
	return o, nil
}

// prepareDeployNetwork runs before a Deploy step the lifecycle accepts:
// it renders the model with the addresses AUTO links would get, refusing
// with the field errors (nothing changed) when it does not render, then
// allocates them. It reports whether it allocated anything, for the
// caller to give it back if the step fails after all.
func (s *Service) prepareDeployNetwork(ctx context.Context, actor machine.Actor, systemID string, in machine.Input) (bool, error) {
	m, err := s.Store.GetMachine(ctx, systemID)
	if err != nil || !machine.CanView(actor, &m) {
		return false, nil // the step answers in words of its own
	}
	in.Actor, in.Now = actor, s.Now()
	if _, err := machine.Step(m, in, s.lifecycle(ctx)); err != nil {
		return false, nil
	}
	n, nm, err := s.machineNetwork(ctx, systemID)
	if err != nil {
		return false, err
	}
	if !configured(nm) {
		return false, nil
	}
	dry, err := s.dryAllocate(ctx, n, nm)
	if err != nil {
		return false, err
	}
	opt, err := s.renderOptions(ctx, m)
	if err != nil {
		return false, err
	}
	if _, err := network.Render(n, dry, opt); err != nil {
		return false, err
	}
	allocated := false
	for _, i := range nm.Interfaces {
		for k, l := range i.Links {
			if l.Mode != network.LinkAuto || l.IP.IsValid() || l.SubnetID == 0 {
				continue
			}
			_, err := s.Store.AllocateIP(ctx, store.IPAddress{ID: int64(l.ID), SubnetID: int64(l.SubnetID), InterfaceID: int64(i.ID), AllocType: store.AllocAuto})
			if err != nil {
				if allocated {
					s.logErr(s.Store.ReleaseAutoIPs(ctx, systemID), "release addresses", systemID)
				}
				return false, fielderr.Errors{fmt.Sprintf("%s.links.%d.ip_address", i.Name, k): {err.Error()}}
			}
			allocated = true
		}
	}
	return allocated, nil
}

// dryAllocate is the model with every unallocated AUTO link given the
// address the allocator would pick now, nothing stored.
func (s *Service) dryAllocate(ctx context.Context, n *network.Network, nm *network.Machine) (*network.Machine, error) {
	out := *nm
	out.Interfaces = make([]network.Interface, len(nm.Interfaces))
	taken, err := s.Store.RackAddresses(ctx)
	if err != nil {
		return nil, err
	}
	read := map[int]bool{}
	for k, i := range nm.Interfaces {
		i.Links = append([]network.Link(nil), i.Links...)
		for j, l := range i.Links {
			if l.Mode != network.LinkAuto || l.IP.IsValid() || l.SubnetID == 0 {
				continue
			}
			sn, ok := n.Subnet(l.SubnetID)
			if !ok {
				continue // Render names the missing subnet
			}
			if !read[sn.ID] {
				read[sn.ID] = true
				held, err := s.Store.ListIPAddresses(ctx, store.IPAddressFilter{SubnetID: int64(sn.ID)})
				if err != nil {
					return nil, err
				}
				for _, a := range held {
					if ip, err := netip.ParseAddr(a.IP); err == nil {
						taken[ip] = true
					}
				}
			}
			ip, err := network.NextFree(n, sn, func(a netip.Addr) bool { return taken[a] })
			if err != nil {
				return nil, fielderr.Errors{fmt.Sprintf("%s.links.%d.ip_address", i.Name, j): {err.Error()}}
			}
			taken[ip] = true
			i.Links[j].IP = ip
		}
		out.Interfaces[k] = i
	}
	return &out, nil
}

// networkConfig is the deploying machine's rendered network-config, ""
// when its model asks for nothing beyond the default.
func (s *Service) networkConfig(ctx context.Context, m machine.Machine) (string, error) {
	n, nm, err := s.machineNetwork(ctx, m.SystemID)
	if err != nil {
		return "", err
	}
	if !configured(nm) {
		return "", nil
	}
	opt, err := s.renderOptions(ctx, m)
	if err != nil {
		return "", err
	}
	b, err := network.Render(n, nm, opt)
	if err != nil {
		return "", fmt.Errorf("render the network of %s: %w", m.SystemID, err)
	}
	return string(b), nil
}

// releasesAddresses says whether a move between statuses ends a
// deployment (released, aborted, failed), which gives back its AUTO
// addresses. Rescue mode and the like keep them.
func releasesAddresses(from, to machine.Status) bool {
	if from == to {
		return false
	}
	switch to {
	case machine.Releasing, machine.FailedDeployment:
		return true
	case machine.Allocated, machine.Ready:
		return from == machine.Deploying || from == machine.Deployed
	}
	return false
}

// noteStatus gives back the machine's AUTO addresses when its status
// change ends a deployment, and deletes its devices when it is released.
// A failure is logged: the next deploy allocates afresh anyway.
func (s *Service) noteStatus(ctx context.Context, from machine.Status, m machine.Machine) {
	if releasesAddresses(from, m.Status) {
		s.logErr(s.Store.ReleaseAutoIPs(ctx, m.SystemID), "release addresses", m.SystemID)
	}
	if device.GoWithRelease(from, m.Status) {
		_, err := s.Store.DeleteChildDevices(ctx, m.SystemID)
		s.logErr(err, "delete devices", m.SystemID)
	}
}

// placeInterfaces puts the machine's new physical interfaces on the VLANs
// where the rack saw them (network.Place decides), making a fabric for
// each seen on no known subnet, after commissioning reported them. A
// failure is logged: the interfaces stay disconnected, which an operator
// can mend through the API.
func (s *Service) placeInterfaces(ctx context.Context, m machine.Machine) {
	if err := s.place(ctx, m); err != nil {
		s.logErr(err, "place interfaces", m.SystemID)
	}
}

func (s *Service) place(ctx context.Context, m machine.Machine) error {
	n, nm, err := s.Store.MachineNetwork(ctx, m.SystemID)
	if err != nil {
		return err
	}
	var macs []string
	for _, i := range m.Interfaces {
		macs = append(macs, i.MAC)
	}
	sightings, err := s.Store.MachineSightings(ctx, macs)
	if err != nil {
		return err
	}
	seen := map[string]netip.Addr{}
	for _, d := range sightings {
		if hw, err := net.ParseMAC(d.MAC); err == nil {
			if a, err := netip.ParseAddr(d.IP); err == nil {
				seen[hw.String()] = a
			}
		}
	}
	for _, p := range network.Place(n, nm, seen) {
		vlan := int64(p.VLANID)
		if p.NewFabric {
			f, err := s.Store.CreateFabric(ctx, store.Fabric{})
			if err != nil {
				return err
			}
			v, err := s.Store.GetVLANByVID(ctx, f.ID, 0)
			if err != nil {
				return err
			}
			vlan = v.ID
		}
		i, err := s.Store.GetInterface(ctx, m.SystemID, int64(p.InterfaceID))
		if err != nil {
			return err
		}
		i.VLANID = vlan
		if _, err := s.Store.UpdateInterface(ctx, i); err != nil {
			return err
		}
		if p.DHCPSubnet != 0 {
			if _, err := s.Store.CreateIPAddress(ctx, store.IPAddress{InterfaceID: i.ID, SubnetID: int64(p.DHCPSubnet), AllocType: store.AllocDHCP}); err != nil {
				return err
			}
		}
	}
	return nil
}
