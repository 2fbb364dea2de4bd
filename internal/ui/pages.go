package ui

import (
	"net/http"
	"slices"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// addData is the add-machine form: by MAC (the machine then enlists or is
// commissioned on its first boot) or by BMC alone (Anvil powers it on and
// learns its MACs from the environment, which reads its BMC in-band).
type addData struct {
	Zones, Pools, PowerTypes []string
	Architectures            []string
	MAC                      string // prefilled, from the discoveries page
}

// discoveriesPage lists MACs that asked for an address or a boot and
// belong to no machine: racked servers nobody has added yet.
func (s *Server) discoveriesPage(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	ds, err := s.store.ListDiscoveries(r.Context())
	if err != nil {
		return "", err
	}
	v.Title, v.Nav, v.Data = "Discoveries", "discoveries", ds
	return "discoveries.html", nil
}

func (s *Server) addPage(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	zones, pools, err := s.groupNames(r)
	if err != nil {
		return "", err
	}
	d := addData{Zones: zones, Pools: pools, PowerTypes: s.svc.Power.Drivers().Names(),
		Architectures: []string{"amd64/generic", "arm64/generic"}, MAC: r.URL.Query().Get("mac")}
	slices.Sort(d.PowerTypes)
	v.Title, v.Nav, v.Data = "Add machine", "add", d
	return "add.html", nil
}

func (s *Server) groupNames(r *http.Request) (zones, pools []string, err error) {
	zs, err := s.store.ListZones(r.Context())
	if err != nil {
		return nil, nil, err
	}
	ps, err := s.store.ListPools(r.Context())
	if err != nil {
		return nil, nil, err
	}
	for _, z := range zs {
		zones = append(zones, z.Name)
	}
	for _, p := range ps {
		pools = append(pools, p.Name)
	}
	slices.Sort(zones)
	slices.Sort(pools)
	return zones, pools, nil
}

// settingsData is the settings page: drift policy per pool, the power
// monitor, subnets with DHCP, and images.
type settingsData struct {
	Pools         []poolPolicy
	Policies      []machine.DriftPolicy
	Subnets       []store.Subnet
	Ranges        []store.IPRange
	Images        []store.BootResource
	PollInterval  string
	MonitorLeader bool
}

type poolPolicy struct {
	ID     int64
	Name   string
	Policy string
}

func (s *Server) settingsPage(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	ctx := r.Context()
	ps, err := s.store.ListPools(ctx)
	if err != nil {
		return "", err
	}
	pol, err := s.store.PoolDriftPolicies(ctx)
	if err != nil {
		return "", err
	}
	d := settingsData{Policies: []machine.DriftPolicy{machine.Enforce, machine.Warn}, PollInterval: s.svc.PollInterval(ctx).String()}
	for _, p := range ps {
		d.Pools = append(d.Pools, poolPolicy{p.ID, p.Name, pol[p.Name]})
	}
	if d.Subnets, err = s.store.ListSubnets(ctx); err != nil {
		return "", err
	}
	if d.Ranges, err = s.store.ListIPRanges(ctx); err != nil {
		return "", err
	}
	if d.Images, err = s.store.ListBootResources(ctx); err != nil {
		return "", err
	}
	v.Title, v.Nav, v.Data = "Settings", "settings", d
	return "settings.html", nil
}

// deployableImages names the images a deploy can use (boot resources with
// a complete file), as osystem/series.
func (s *Server) deployableImages(r *http.Request) ([]string, error) {
	rs, err := s.store.ListBootResources(r.Context())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, br := range rs {
		for _, f := range br.Files {
			if f.Complete {
				out = append(out, br.Name)
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
