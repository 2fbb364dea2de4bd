package api

import (
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// domainJSON is MAAS's domain object. Anvil has no DNS model yet, so every
// domain reads as MAAS's default one does: authoritative, no TTL of its
// own, no records; "maas" is the default.
type domainJSON struct {
	ID                  int    `json:"id"`
	Name                string `json:"name"`
	TTL                 *int   `json:"ttl"`
	Authoritative       bool   `json:"authoritative"`
	ResourceRecordCount int    `json:"resource_record_count"`
	IsDefault           bool   `json:"is_default"`
	ResourceURI         string `json:"resource_uri"`
}

// defaultDomain is the domain machines get when none is given, as in MAAS.
const defaultDomain = "maas"

func renderDomain(name string) domainJSON {
	return domainJSON{Name: name, Authoritative: true, IsDefault: name == defaultDomain, ResourceURI: Prefix + "domains/0/"}
}

type zoneJSON struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	ResourceURI string `json:"resource_uri"`
}

type poolJSON zoneJSON

// names resolves zone and pool names to their rendered form; lists look
// each one up once rather than once per machine.
type names struct {
	zones map[string]zoneJSON
	pools map[string]poolJSON
}

func (s *Server) loadNames(r *request) (names, error) {
	zs, err := s.store.ListZones(r.Context())
	if err != nil {
		return names{}, err
	}
	ps, err := s.store.ListPools(r.Context())
	if err != nil {
		return names{}, err
	}
	n := names{zones: map[string]zoneJSON{}, pools: map[string]poolJSON{}}
	for _, z := range zs {
		n.zones[z.Name] = renderZone(z)
	}
	for _, p := range ps {
		n.pools[p.Name] = renderPool(p)
	}
	return n, nil
}

// zone and pool render a machine's zone and pool as renderMachine does.
func (n names) zone(name string) zoneJSON {
	if z, ok := n.zones[name]; ok {
		return z
	}
	return zoneJSON{Name: name, ResourceURI: Prefix + "zones/" + name + "/"}
}

func (n names) pool(name string) poolJSON {
	if p, ok := n.pools[name]; ok {
		return p
	}
	return poolJSON{Name: name}
}

func renderZone(z store.Zone) zoneJSON {
	return zoneJSON{ID: z.ID, Name: z.Name, Description: z.Description, ResourceURI: Prefix + "zones/" + z.Name + "/"}
}

func renderPool(p store.Pool) poolJSON {
	return poolJSON{ID: p.ID, Name: p.Name, Description: p.Description, ResourceURI: Prefix + "resourcepool/" + itoa(p.ID) + "/"}
}

// maasTime is the timestamp format of MAAS's event answers.
const maasTime = "Mon, 02 Jan. 2006 15:04:05"

type eventJSON struct {
	ID          int64  `json:"id"`
	Node        string `json:"node"`
	Hostname    string `json:"hostname"`
	Username    string `json:"username"`
	Level       string `json:"level"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Created     string `json:"created"`
}

func renderEvent(e machine.Event) eventJSON {
	return eventJSON{
		ID: e.ID, Node: e.SystemID, Hostname: e.Hostname, Username: e.User, Level: string(e.Level),
		Type: e.Type, Description: e.Description, Created: e.Created.UTC().Format(maasTime),
	}
}
