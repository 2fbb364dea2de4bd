package api

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/settings"
	"github.com/anvilmetal/anvil/internal/store"
)

func (s *Server) rackRoutes() []route {
	routes := []route{
		get("boot_stream", rackAccess, s.bootStream),
		post("boot_events", rackAccess, s.bootEvents),
		post("dhcp_leases", rackAccess, s.dhcpLeases),
	}
	return append(append(routes, s.rackEnrolRoutes()...), s.rackPowerRoutes()...)
}

// bootEvents records what a rack saw of boots: on the machine that owns
// the MAC (or SMBIOS UUID), with the address it was seen with, else as a
// discovery of an unknown machine.
func (s *Server) bootEvents(w http.ResponseWriter, r *request) error {
	var evs []rack.BootEvent
	if err := json.Unmarshal([]byte(r.form.Get("events")), &evs); err != nil {
		return badField("events", "must be a JSON array of boot events: %v", err)
	}
	if len(evs) > 1000 {
		return badField("events", "at most 1000 events per request")
	}
	var macs []string
	for i, e := range evs {
		mac, err := machine.NormaliseMAC(e.MAC)
		if err != nil {
			return badField("events", "event %d: %v", i, err)
		}
		evs[i].MAC = mac
		macs = append(macs, mac)
	}
	ms, err := s.store.ListMachines(r.Context(), store.MachineFilter{MACs: macs})
	if err != nil {
		return err
	}
	owner := map[string]*machine.Machine{}
	for i := range ms {
		for _, ifc := range ms[i].Interfaces {
			owner[ifc.MAC] = &ms[i]
		}
	}
	var known []machine.Event
	var bootedLocal []string
	discovered := 0
	// addresses are the machines' MACs seen with an address, the last
	// sighting of each: where the pages read a machine's addresses.
	addresses := map[string]store.Discovery{}
	// network_discovery=disabled keeps boots of unknown MACs out of the
	// discoveries, as MAAS's setting keeps its passive discovery off.
	discover := s.svc.SettingString(r.Context(), settings.NetworkDiscovery) != "disabled"
	for _, e := range evs {
		at := e.At
		if at.IsZero() || at.After(time.Now().Add(time.Minute)) {
			at = time.Now()
		}
		if m := owner[e.MAC]; m != nil {
			if e.Kind == "config" && e.Purpose == string(machine.BootLocal) && m.EndsOnLocalBoot() {
				bootedLocal = append(bootedLocal, m.SystemID)
			}
			if e.IP != "" {
				addresses[e.MAC] = store.Discovery{MAC: e.MAC, IP: e.IP, LastSeen: at, LastWhat: truncate(e.Kind+" "+e.Detail, 200)}
			}
			if desc, ok := s.boot.event(m.SystemID, e, truncate(e.Detail, 500)); ok {
				known = append(known, machine.Event{
					SystemID: m.SystemID, Hostname: m.Hostname, Type: machine.BootStepType + truncate(e.Kind, 20), Level: machine.LevelInfo,
					Description: desc, Created: at.UTC(),
				})
			}
			continue
		}
		if !discover || !s.boot.discovery(rackKey(r), e) {
			continue
		}
		if err := s.store.NoteDiscovery(r.Context(), store.Discovery{MAC: e.MAC, IP: e.IP, LastSeen: at, LastWhat: truncate(e.Kind+" "+e.Detail, 200)}); err != nil {
			return err
		}
		discovered++
	}
	for _, d := range addresses {
		if err := s.store.NoteDiscovery(r.Context(), d); err != nil {
			return err
		}
	}
	if len(known) > 0 {
		if err := s.store.AppendEvents(r.Context(), known...); err != nil {
			return err
		}
		s.svc.Hub.Notify()
	}
	for _, id := range bootedLocal {
		if err := s.svc.BootedLocal(r.Context(), id); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, map[string]int{"recorded": len(known), "discovered": discovered})
	return nil
}

// rackSubnets is the DHCP configuration rack rackID serves.
func (s *Server) rackSubnets(r *request, hc *hostCache, rackID string) ([]rack.Subnet, error) {
	ss, err := s.store.ListSubnets(r.Context())
	if err != nil {
		return nil, err
	}
	rs, err := s.store.ListIPRanges(r.Context())
	if err != nil {
		return nil, err
	}
	hosts, err := hc.get(r.Context(), s.store)
	if err != nil {
		return nil, err
	}
	vlans, err := s.store.ListVLANs(r.Context())
	if err != nil {
		return nil, err
	}
	doms, err := s.store.ListDomains(r.Context())
	if err != nil {
		return nil, err
	}
	// As MAAS: the default domain is every subnet's domain name, and
	// leads the search list.
	search := store.DNSSearch(doms, "")
	vlanOf := map[int64]store.VLAN{}
	for _, v := range vlans {
		vlanOf[v.ID] = v
	}
	out := make([]rack.Subnet, 0, len(ss))
	for _, sn := range ss {
		// The rack's DHCP server is IPv4's; IPv6 subnets are not its.
		if p, err := netip.ParsePrefix(sn.CIDR); err != nil || !p.Addr().Is4() {
			continue
		}
		// DHCP is on by the subnet's own switch or its VLAN's (MAAS's).
		rsn := rack.Subnet{CIDR: sn.CIDR, Gateway: sn.Gateway, DNS: sn.DNSServers, Domain: cmp.Or(sn.Domain, search[0]), DHCP: sn.DHCP || vlanOf[sn.VLANID].DHCPOn,
			LeaseSeconds: sn.LeaseSeconds, AllowDNS: sn.AllowDNS, Search: search}
		for _, h := range hosts {
			if h.SubnetID == sn.ID {
				rsn.Hosts = append(rsn.Hosts, rack.Host{MAC: h.MAC, IP: h.IP, Hostname: h.Hostname})
			}
		}
		for _, ir := range rs {
			if ir.SubnetID != sn.ID {
				continue
			}
			if ir.Type == "dynamic" {
				rsn.Dynamic = append(rsn.Dynamic, [2]string{ir.Start, ir.End})
			} else {
				rsn.Reserved = append(rsn.Reserved, [2]string{ir.Start, ir.End})
			}
		}
		shareSubnet(&rsn, vlanOf[sn.VLANID], rackID)
		out = append(out, rsn)
	}
	return out, nil
}

func (s *Server) discoveriesRoutes() []route {
	return []route{get("", authenticated, func(w http.ResponseWriter, r *request) error {
		ds, err := s.store.ListDiscoveries(r.Context())
		if err != nil {
			return err
		}
		out := make([]map[string]any, 0, len(ds))
		for _, d := range ds {
			out = append(out, map[string]any{"mac_address": d.MAC, "ip": d.IP, "first_seen": d.FirstSeen.UTC().Format(time.RFC3339),
				"last_seen": d.LastSeen.UTC().Format(time.RFC3339), "seen": d.Seen, "last_seen_doing": d.LastWhat})
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})}
}

// bootStream sends a rack everything it needs to answer boots: a full
// snapshot, then every change, as Server-Sent Events. It is
// level-triggered: on each wake it compares the machines' stored versions
// with what it has sent and sends the difference, so a missed wake-up, a
// change made by another region, or a reconnect costs nothing but a
// re-send.
func (s *Server) bootStream(w http.ResponseWriter, r *request) error {
	sw, err := startSSE(w, r.Request)
	if err != nil {
		return err
	}
	w, fl := http.ResponseWriter(sw), sw
	send := func(ch rack.Change) {
		b, _ := json.Marshal(ch)
		fmt.Fprintf(w, "event: change\ndata: %s\n\n", b)
	}
	// sent is the version last seen of each machine, and sentEntry the
	// entry last sent, without its version: a power reading changes a
	// machine's version but not its entry, and with the monitor polling
	// 10,000 machines, sending each of those to the rack (which rewrites
	// its cache file on every change) cost 12% of the region's CPU.
	sent := map[string]int64{}
	sentEntry := map[string]string{}
	first := true
	var sentSubnets, sentOpts string
	var hosts hostCache
	var leases leaseFeed
	rk, touched := rackOf(r), time.Time{}
	// DNS is compared on every step: the machines' part is derived again
	// when one changes in a way DNS shows, else once a second.
	feed := newDNSFeed()
	// A quarter of a second between scans: a rack learns a change within
	// that, long before a machine could reboot to use it.
	s.follow(r, w, fl, 250*time.Millisecond, func() (bool, error) {
		if err := s.touchRack(r.Context(), rk, &touched); err != nil {
			return false, err
		}
		vs, err := s.store.ListMachineVersions(r.Context(), store.MachineFilter{})
		if err != nil {
			return false, err
		}
		opts, key, err := s.tagKernelOpts(r)
		if err != nil {
			return false, err
		}
		if key != sentOpts {
			// A tag's kernel_opts changed: every entry is rendered again
			// (and sent where it differs).
			for id := range sent {
				sent[id] = -1
			}
			sentOpts = key
		}
		var ids []string
		live := make(map[string]bool, len(vs))
		for _, v := range vs {
			live[v.SystemID] = true
			if sent[v.SystemID] != v.Version {
				ids = append(ids, v.SystemID)
			}
		}
		if first {
			send(rack.Change{Reset: true})
		}
		if len(ids) > 0 {
			f := store.MachineFilter{SystemIDs: ids}
			if first {
				f = store.MachineFilter{} // everything: no huge id list
			}
			ms, err := s.store.ListMachines(r.Context(), f)
			if err != nil {
				return false, err
			}
			for i := range ms {
				feed.note(&ms[i])
				e := rack.EntryOf(&ms[i])
				for _, t := range ms[i].Tags { // by name
					e.KernelOpts = append(e.KernelOpts, opts[t]...)
				}
				sent[e.SystemID] = e.Version
				unversioned := e
				unversioned.Version = 0
				key, _ := json.Marshal(unversioned)
				if sentEntry[e.SystemID] == string(key) {
					continue
				}
				sentEntry[e.SystemID] = string(key)
				send(rack.Change{Upsert: &e})
			}
		}
		for id := range sent {
			if !live[id] {
				send(rack.Change{Delete: id})
				delete(sent, id)
				delete(sentEntry, id)
				feed.forget(id)
			}
		}
		d, err := s.dnsData(r.Context(), feed)
		if err != nil {
			return false, err
		}
		if ok, err := s.changed(r.Context(), feed, &d); err != nil {
			return false, err
		} else if ok {
			send(rack.Change{DNS: &d})
		}
		subnets, err := s.rackSubnets(r, &hosts, rk.SystemID)
		if err != nil {
			return false, err
		}
		if b, _ := json.Marshal(subnets); string(b) != sentSubnets {
			send(rack.Change{Subnets: &subnets})
			sentSubnets = string(b)
		}
		if err := leases.step(s, r, rk.SystemID, subnets, send); err != nil {
			return false, err
		}
		if first {
			send(rack.Change{Synced: true})
			first = false
		}
		return false, nil
	})
	return nil
}

// tagKernelOpts are the tags' kernel options, split, by tag name, and a
// key that changes when any does.
func (s *Server) tagKernelOpts(r *request) (map[string][]string, string, error) {
	tags, err := s.store.ListTags(r.Context())
	if err != nil {
		return nil, "", err
	}
	out := map[string][]string{}
	var key strings.Builder
	for _, t := range tags {
		if f := strings.Fields(t.KernelOpts); len(f) > 0 {
			out[t.Name] = f
			key.WriteString(t.Name + "=" + t.KernelOpts + "\n")
		}
	}
	return out, key.String(), nil
}

// hostCache keeps a stream's fixed leases for hostsEvery between reads:
// reading them costs about 37 ms at 10,000 addresses on SQLite, too much
// for every quarter-second scan, and a lease a machine only uses at its
// next boot can wait two seconds.
type hostCache struct {
	at    time.Time
	hosts []store.DHCPHost
}

const hostsEvery = 2 * time.Second

func (c *hostCache) get(ctx context.Context, st store.Store) ([]store.DHCPHost, error) {
	if !c.at.IsZero() && time.Since(c.at) < hostsEvery {
		return c.hosts, nil
	}
	hs, err := st.DHCPHosts(ctx)
	if err != nil {
		return nil, err
	}
	c.at, c.hosts = time.Now(), hs
	return hs, nil
}
