package ui

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/store"
)

// rackRow is a rack on the controllers page.
type rackRow struct {
	rack.View
	SeenAgo  string
	Services []rack.ServiceStatus
	VLANs    []string // "fabric-0.untagged (primary)"
	Addrs    string
}

type controllersData struct {
	Racks   []rackRow
	Regions []store.RegionSeen
	Now     time.Time
}

// controllersPage lists the racks (with what each last reported: its
// addresses, the VLANs it serves, its BMC networks and the health of its
// services) and the regions sharing the database.
func (s *Server) controllersPage(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	ctx := r.Context()
	racks, err := s.store.ListRacks(ctx)
	if err != nil {
		return "", fmt.Errorf("racks: %w", err)
	}
	names, err := s.netNames(ctx)
	if err != nil {
		return "", err
	}
	regions, err := s.store.RegionsSeen(ctx)
	if err != nil {
		return "", fmt.Errorf("regions: %w", err)
	}
	now := time.Now()
	d := controllersData{Regions: regions, Now: now}
	for _, k := range racks {
		rv := rack.ViewOf(k, now)
		row := rackRow{View: rv, SeenAgo: ago(k.Seen), Services: rv.Services()}
		roles := rv.VLANRoles(names.VLANs, names.Subnets)
		for _, vl := range names.VLANs {
			if role := roles[vl.ID]; role != "" {
				row.VLANs = append(row.VLANs, names.VLANName(vl.ID)+" ("+role+")")
			}
		}
		var addrs []string
		for _, a := range rv.Addresses() {
			if !a.IsLinkLocalUnicast() {
				addrs = append(addrs, a.String())
			}
		}
		if len(addrs) == 0 && k.Address != "" {
			addrs = []string{k.Address}
		}
		row.Addrs = strings.Join(addrs, ", ")
		d.Racks = append(d.Racks, row)
	}
	v.Title, v.Nav, v.Data = "Controllers", "controllers", d
	return "controllers.html", nil
}
