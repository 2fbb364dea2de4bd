package api

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/store"
)

// MAAS's rackcontrollers/ and regioncontrollers/, read only: the
// processes Anvil runs. Regions record themselves every minute (the
// regions table); racks are recorded while they follow the boot stream.
// Anvil has no hardware inventory of its controllers, so those fields
// have MAAS's empty values.

func init() {
	addDocs(map[string]string{
		"RackControllersHandler":      "The racks following this region's boot stream (anvil rack, and the rack inside anvil serve).",
		"RackControllersHandler read": doc("List the racks that have followed the boot stream, with their version, address and whether one is connected now."),
		"RackControllerHandler":       "One rack.",
		"RackControllerHandler read":  doc("Read a rack."),
		"RackControllerHandler details": doc("Read what commissioning found on the rack, as MAAS's BSON details.",
			"Anvil does not commission its controllers: lshw and lldp are null."),
		"RegionControllersHandler": "The region processes sharing this database.",
		"RegionControllersHandler read": doc("List the regions, with whether each was seen in the last two minutes.",
			"Only the answering region's version is known; the others' is empty."),
		"RegionControllerHandler":      "One region.",
		"RegionControllerHandler read": doc("Read a region."),
		"RegionControllerHandler details": doc("Read what commissioning found on the region, as MAAS's BSON details.",
			"Anvil does not commission its controllers: lshw and lldp are null."),
	})
}

// Each process reports itself at least once a minute; one silent for
// twice that is taken for dead.
const (
	rackTouchEvery  = 30 * time.Second
	controllerAlive = store.RackAlive
)

// MAAS's node types.
const (
	nodeTypeRack   = 2
	nodeTypeRegion = 3
)

// controllerJSON is MAAS's controller (DISPLAYED_RACK_CONTROLLER_FIELDS;
// regions have the same but service_set), plus Anvil's last_seen.
type controllerJSON struct {
	SystemID       string            `json:"system_id"`
	Hostname       string            `json:"hostname"`
	Description    string            `json:"description"`
	HardwareUUID   *string           `json:"hardware_uuid"`
	Domain         domainJSON        `json:"domain"`
	FQDN           string            `json:"fqdn"`
	Architecture   string            `json:"architecture"`
	CPUCount       int               `json:"cpu_count"`
	CPUSpeed       int               `json:"cpu_speed"`
	Memory         int               `json:"memory"`
	SwapSize       *int64            `json:"swap_size"`
	OSystem        string            `json:"osystem"`
	DistroSeries   string            `json:"distro_series"`
	PowerType      string            `json:"power_type"`
	PowerState     string            `json:"power_state"`
	IPAddresses    []string          `json:"ip_addresses"`
	Interfaces     []ifaceJSON       `json:"interface_set"`
	Zone           zoneJSON          `json:"zone"`
	StatusAction   string            `json:"status_action"`
	NodeType       int               `json:"node_type"`
	NodeTypeName   string            `json:"node_type_name"`
	Services       []serviceJSON     `json:"service_set,omitempty"`
	CommissioningR *int64            `json:"current_commissioning_result_id"`
	TestingR       *int64            `json:"current_testing_result_id"`
	InstallationR  *int64            `json:"current_installation_result_id"`
	Version        string            `json:"version"`
	HardwareInfo   map[string]string `json:"hardware_info"`
	TagNames       []string          `json:"tag_names"`
	LastSeen       string            `json:"last_seen"`
	ResourceURI    string            `json:"resource_uri"`
	scriptStatusesJSON
	*RackFields
}

type serviceJSON struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	StatusInfo string `json:"status_info"`
}

// controllerID is a stable MAAS-style system_id for a process Anvil
// knows by a name (a region's URL, a rack's host and address).
func controllerID(kind, key string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + key))
	return strings.ToLower(base32.StdEncoding.EncodeToString(sum[:]))[:6]
}

func renderController(n names, id, host, version, ip string, seen time.Time, nodeType int, service string, now time.Time) controllerJSON {
	c := controllerJSON{
		SystemID: id, Hostname: host, Domain: renderDomain(defaultDomain), FQDN: host + "." + defaultDomain,
		PowerType: "", PowerState: "unknown", IPAddresses: []string{}, Interfaces: []ifaceJSON{},
		Zone: n.zone("default"), NodeType: nodeType, Version: version, HardwareInfo: hardwareInfo(nil),
		TagNames: []string{}, LastSeen: seen.UTC().Format(time.RFC3339), scriptStatusesJSON: scriptStatuses(&machine.Machine{}),
	}
	if ip != "" {
		c.IPAddresses = []string{ip}
	}
	status, info := "running", ""
	if now.Sub(seen) > controllerAlive {
		status, info = "dead", "not seen since "+c.LastSeen
	}
	c.Services = []serviceJSON{{Name: service, Status: status, StatusInfo: info}}
	if nodeType == nodeTypeRack {
		c.NodeTypeName, c.ResourceURI = "Rack controller", Prefix+"rackcontrollers/"+id+"/"
	} else {
		c.NodeTypeName, c.ResourceURI = "Region controller", Prefix+"regioncontrollers/"+id+"/"
	}
	return c
}

func (s *Server) racks(r *request) ([]controllerJSON, error) {
	rs, err := s.store.ListRacks(r.Context())
	if err != nil {
		return nil, err
	}
	n, err := s.loadNames(r)
	if err != nil {
		return nil, err
	}
	v, err := s.netView(r.Context())
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]controllerJSON, 0, len(rs))
	for _, k := range rs {
		out = append(out, renderRack(n, v, k, now))
	}
	return out, nil
}

func (s *Server) regions(r *request) ([]controllerJSON, error) {
	gs, err := s.store.RegionsSeen(r.Context())
	if err != nil {
		return nil, err
	}
	n, err := s.loadNames(r)
	if err != nil {
		return nil, err
	}
	out := make([]controllerJSON, 0, len(gs))
	for _, g := range gs {
		host, ip := g.URL, ""
		if u, err := url.Parse(g.URL); err == nil && u.Hostname() != "" {
			host = u.Hostname()
			if net.ParseIP(host) != nil {
				ip = host
			}
		}
		version := ""
		if g.URL == s.opts.Self {
			// This region knows its own name; of the others only the
			// address they advertise is known.
			version = s.opts.Version
			if h, err := os.Hostname(); err == nil && h != "" {
				host = h
			}
		}
		out = append(out, renderController(n, controllerID("region", g.URL), host, version, ip, g.Seen, nodeTypeRegion, "regiond", time.Now()))
	}
	return out, nil
}

// controllerRoutes serve a collection and its items from one lister.
func controllerRoutes(list func(*request) ([]controllerJSON, error)) (collection, item []route) {
	collection = []route{get("", authenticated, func(w http.ResponseWriter, r *request) error {
		cs, err := list(r)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, cs)
		return nil
	})}
	find := func(r *request) (controllerJSON, error) {
		cs, err := list(r)
		if err != nil {
			return controllerJSON{}, err
		}
		for _, c := range cs {
			if c.SystemID == r.id {
				return c, nil
			}
		}
		return controllerJSON{}, store.ErrNotFound
	}
	item = []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			c, err := find(r)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, c)
			return nil
		}),
		// Controllers are not commissioned: MAAS's details with no dumps.
		get("details", authenticated, func(w http.ResponseWriter, r *request) error {
			if _, err := find(r); err != nil {
				return err
			}
			return writeBSON(w, bsonDoc{{Key: "lshw"}, {Key: "lldp"}})
		}),
	}
	return collection, item
}

// rackOf is who a rack following the boot stream is: the host name it
// gives, the address it connects from and the version in its User-Agent.
func rackOf(r *request) store.Rack {
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	host := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' {
			return c
		}
		return -1
	}, truncate(r.form.Get("hostname"), 64))
	if host == "" {
		host = addr
	}
	version := ""
	if v, ok := strings.CutPrefix(r.UserAgent(), rack.RackAgent); ok {
		version = v
	}
	k := store.Rack{SystemID: controllerID("rack", host+"@"+addr), Hostname: host, Address: addr, Version: truncate(version, 40),
		DNS: rackDNS(r.form["dns"])}
	if c := r.who.rack; c != nil {
		// An enrolled rack is who its credential says.
		k.SystemID, k.Enrolled = c.RackID, true
		if r.form.Get("hostname") == "" {
			k.Hostname = c.Hostname
		}
	}
	return k
}

// rackDNS keeps the addresses a rack says it answers DNS at that a
// machine could use: unicast, not loopback, at most 32 (a rack on many
// VLANs answers on each).
func rackDNS(vs []string) []string {
	var out []string
	for _, v := range vs {
		a, err := netip.ParseAddr(v)
		if err != nil || a.Zone() != "" || !a.IsGlobalUnicast() || slices.Contains(out, a.String()) {
			continue
		}
		if out = append(out, a.String()); len(out) == 32 {
			break
		}
	}
	return out
}

// touchRack records the rack now and then while its stream lasts; a
// failure costs only the listing, so it is logged, not fatal, but an
// enrolled rack deleted meanwhile ends its stream: its credential is
// revoked.
func (s *Server) touchRack(ctx context.Context, k store.Rack, last *time.Time) error {
	if time.Since(*last) < rackTouchEvery {
		return nil
	}
	*last = time.Now()
	err := s.store.TouchRack(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("rack %s was deleted: its credential is revoked", k.SystemID)
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn("record rack", "rack", k.Hostname, "err", err)
	}
	return nil
}
