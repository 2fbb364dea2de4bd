package api

import (
	"cmp"
	"context"
	"slices"

	"github.com/anvilmetal/anvil/internal/device"
	"github.com/anvilmetal/anvil/internal/store"
)

// deviceJSON is MAAS's DeviceHandler.fields (DISPLAYED_DEVICE_FIELDS)
// and resource_uri.
type deviceJSON struct {
	SystemID            string            `json:"system_id"`
	Hostname            string            `json:"hostname"`
	Description         string            `json:"description"`
	Domain              domainJSON        `json:"domain"`
	FQDN                string            `json:"fqdn"`
	Owner               *string           `json:"owner"`
	OwnerData           map[string]string `json:"owner_data"`
	Parent              *string           `json:"parent"`
	TagNames            []string          `json:"tag_names"`
	AddressTTL          *int              `json:"address_ttl"`
	IPAddresses         []string          `json:"ip_addresses"`
	Interfaces          []ifaceJSON       `json:"interface_set"`
	Zone                zoneJSON          `json:"zone"`
	NodeType            int               `json:"node_type"`
	NodeTypeName        string            `json:"node_type_name"`
	WorkloadAnnotations map[string]string `json:"workload_annotations"`
	ResourceURI         string            `json:"resource_uri"`
}

// deviceRenderer holds what rendering devices reads once per request:
// zones, domains and the site's network objects.
type deviceRenderer struct {
	s     *Server
	names names
	dns   dnsState
	view  *netView
}

func (s *Server) deviceRenderer(r *request) (*deviceRenderer, error) {
	n, err := s.loadNames(r)
	if err != nil {
		return nil, err
	}
	st, err := s.loadDNS(r.Context())
	if err != nil {
		return nil, err
	}
	v, err := s.netView(r.Context())
	if err != nil {
		return nil, err
	}
	return &deviceRenderer{s: s, names: n, dns: st, view: v}, nil
}

func deviceURI(id string) string { return Prefix + "devices/" + id + "/" }

func (rd *deviceRenderer) render(ctx context.Context, d *store.Device) (deviceJSON, error) {
	dom := rd.dns.defaultDomain()
	if d.Domain != "" {
		if named, ok := rd.dns.domainByRef(d.Domain); ok {
			dom = named
		}
	}
	j := deviceJSON{
		SystemID: d.SystemID, Hostname: d.Hostname, Description: d.Description,
		Domain: rd.dns.renderDomain(dom), FQDN: d.Hostname + "." + dom.Name,
		OwnerData: nonNil(d.OwnerData), WorkloadAnnotations: nonNil(d.OwnerData),
		TagNames: append([]string{}, d.Tags...), IPAddresses: []string{}, Interfaces: []ifaceJSON{},
		Zone: rd.names.zone(cmp.Or(d.Zone, "default")), NodeType: device.NodeType, NodeTypeName: device.NodeTypeName,
		ResourceURI: deviceURI(d.SystemID),
	}
	if d.Owner != "" {
		j.Owner = &d.Owner
	}
	if d.Parent != "" {
		j.Parent = &d.Parent
	}
	slices.Sort(j.TagNames)
	n, nm, err := rd.s.store.MachineNetwork(ctx, d.SystemID)
	if err != nil {
		return j, err
	}
	v := ifaceView{n: n, v: rd.view}
	for _, i := range nm.Interfaces {
		j.Interfaces = append(j.Interfaces, v.renderNetIface(d.SystemID, nm, i, nil))
		for _, l := range i.Links {
			if l.IP.IsValid() {
				j.IPAddresses = append(j.IPAddresses, l.IP.String())
			}
		}
	}
	return j, nil
}
