// Package api serves MAAS's REST API 2.0 under /MAAS/api/2.0/: OAuth 1.0
// PLAINTEXT authentication, op= dispatch, form-encoded requests and JSON
// answers shaped as MAAS shapes them, so that existing MAAS clients work.
// It translates HTTP to calls on the region service and decides nothing
// about the lifecycle itself.
package api

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/images"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/store"
)

// Prefix is where the API lives, as in MAAS.
const Prefix = "/MAAS/api/2.0/"

// Options tune the server.
type Options struct {
	// MaxBody caps a request body; larger ones get 413.
	MaxBody int64
	// WatchPoll is how often an event stream re-reads the store when no
	// local change woke it (changes made by other region processes).
	WatchPoll time.Duration
	// Version is Anvil's own version, reported in version/.
	Version string
	// Images keeps the bytes of boot resources; without it boot-resources
	// uploads and image downloads answer 503.
	Images *images.Store
	// Self is this region's own base URL ("http://region:5240/MAAS/"), as
	// recorded in the store's regions; with it, image bytes this region
	// lacks are fetched from the others.
	Self string
	// PeerHTTP fetches from other regions (http.DefaultClient when nil).
	PeerHTTP *http.Client
	// KeySources are where sshkeys/ op=import fetches public keys.
	KeySources KeySources
}

// Server is the API's http.Handler.
type Server struct {
	store store.Store
	svc   *region.Service
	log   *slog.Logger
	opts  Options
	mux   *http.ServeMux
	cache *renderCache
	boot  *bootBounds // what racks' boot events may add (bootbounds.go)
	// resources is the route table describe/ is generated from.
	resources    []resource
	describeHash string
	// warned is what was last logged about each rack's untrusted claims
	// (racktrust.go), so a rack repeating itself is logged once.
	warned sync.Map
	// allowed caches what each enrolled rack may act on (racktrust.go).
	allowed sync.Map
}

// New builds the API over a region service.
func New(svc *region.Service, log *slog.Logger, opts Options) *Server {
	if opts.MaxBody == 0 {
		opts.MaxBody = 1 << 20
	}
	if opts.WatchPoll == 0 {
		opts.WatchPoll = 2 * time.Second
	}
	s := &Server{store: svc.Store, svc: svc, log: log, opts: opts, mux: http.NewServeMux(), cache: newRenderCache(), boot: newBootBounds()}
	s.routes()
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) routes() {
	s.handle(resource{name: "VersionHandler", path: "version/", routes: s.versionRoutes()})
	s.handle(resource{name: "MaasHandler", path: "maas/", routes: s.maasRoutes()})
	s.handle(resource{name: "UsersHandler", path: "users/", routes: s.userRoutes()})
	s.handle(resource{name: "UserHandler", path: "users/{username}/", routes: s.oneUserRoutes()})
	s.handle(resource{name: "AccountHandler", path: "account/", routes: s.accountRoutes()})
	s.handle(resource{name: "SSHKeysHandler", path: "account/prefs/sshkeys/", aliases: []string{"sshkeys/"}, routes: s.sshKeysRoutes()})
	s.handle(resource{name: "SSHKeyHandler", path: "account/prefs/sshkeys/{id}/", aliases: []string{"sshkeys/{id}/"}, routes: s.sshKeyRoutes()})
	s.handle(resource{name: "NodesHandler", anon: "AnonNodesHandler", path: "nodes/", routes: s.nodesRoutes()})
	s.handle(resource{name: "NodeHandler", path: "nodes/{system_id}/", routes: s.nodeRoutes()})
	s.handle(resource{name: "NodeScriptResultsHandler", path: "nodes/{system_id}/results/", notFound: "Node", routes: s.resultsRoutes()})
	s.handle(resource{name: "NodeScriptResultHandler", path: "nodes/{system_id}/results/{id}/", notFound: "Node", routes: s.resultRoutes()})
	s.handle(resource{name: "NodeResultsHandler", path: "commissioning-results/", aliases: []string{"installation-results/"}, routes: s.nodeResultsRoutes()})
	s.storageResources()
	s.handle(resource{name: "InterfacesHandler", path: "nodes/{system_id}/interfaces/", notFound: "Node", routes: s.interfacesRoutes()})
	s.handle(resource{name: "InterfaceHandler", path: "nodes/{system_id}/interfaces/{id}/", routes: s.interfaceRoutes()})
	s.handle(resource{name: "DevicesHandler", path: "devices/", routes: s.devicesRoutes()})
	s.handle(resource{name: "DeviceHandler", path: "devices/{system_id}/", routes: s.deviceRoutes()})
	s.handle(resource{name: "MachinesHandler", anon: "AnonMachinesHandler", path: "machines/", routes: s.machinesRoutes()})
	s.handle(resource{name: "MachineHandler", path: "machines/{system_id}/", routes: s.machineRoutes()})
	s.handle(resource{name: "ZonesHandler", path: "zones/", routes: s.zonesRoutes()})
	s.handle(resource{name: "ZoneHandler", path: "zones/{name}/", routes: s.zoneRoutes()})
	// MAAS serves pools at resourcepools/ and resourcepool/<id>/; older
	// clients (gomaasapi) ask for pools/.
	s.handle(resource{name: "ResourcePoolsHandler", path: "resourcepools/", aliases: []string{"pools/"}, routes: s.poolsRoutes()})
	s.handle(resource{name: "ResourcePoolHandler", path: "resourcepool/{id}/", aliases: []string{"pools/{id}/"}, routes: s.poolRoutes()})
	s.handle(resource{name: "TagsHandler", path: "tags/", routes: s.tagsRoutes()})
	s.handle(resource{name: "TagHandler", path: "tags/{name}/", routes: s.tagRoutes()})
	// MAAS serves one script at scripts/<name>, without a slash.
	s.handle(resource{name: "NodeScriptsHandler", path: "scripts/", routes: s.scriptsRoutes()})
	s.handle(resource{name: "NodeScriptHandler", path: "scripts/{name}", aliases: []string{"scripts/{name}/"}, notFound: "Script", routes: s.scriptRoutes()})
	s.handle(resource{name: "EventsHandler", path: "events/", routes: s.eventsRoutes()})
	s.handle(resource{name: "DomainsHandler", path: "domains/", routes: s.domainsRoutes()})
	s.handle(resource{name: "DomainHandler", path: "domains/{id}/", routes: s.domainRoutes()})
	s.handle(resource{name: "DNSResourcesHandler", path: "dnsresources/", routes: s.dnsResourcesRoutes()})
	s.handle(resource{name: "DNSResourceHandler", path: "dnsresources/{id}/", routes: s.dnsResourceRoutes()})
	s.handle(resource{name: "DNSResourceRecordsHandler", path: "dnsresourcerecords/", routes: s.dnsRecordsRoutes()})
	s.handle(resource{name: "DNSResourceRecordHandler", path: "dnsresourcerecords/{id}/", routes: s.dnsRecordRoutes()})
	// Anvil's own: the racks' boot stream and what they saw of boots
	// (MAAS's racks speak RPC instead), and the discovered NICs.
	s.handle(resource{name: "AnvilRackHandler", path: "rack/", routes: s.rackRoutes()})
	s.handle(resource{name: "AnvilDiscoveriesHandler", path: "discoveries/", routes: s.discoveriesRoutes()})
	s.handle(resource{name: "SubnetsHandler", path: "subnets/", routes: s.subnetsRoutes()})
	s.handle(resource{name: "SubnetHandler", path: "subnets/{id}/", routes: s.subnetRoutes()})
	s.handle(resource{name: "IPRangesHandler", path: "ipranges/", routes: s.ipRangesRoutes()})
	s.handle(resource{name: "IPRangeHandler", path: "ipranges/{id}/", routes: s.ipRangeRoutes()})
	s.handle(resource{name: "FabricsHandler", path: "fabrics/", routes: s.fabricsRoutes()})
	s.handle(resource{name: "FabricHandler", path: "fabrics/{id}/", routes: s.fabricRoutes()})
	s.handle(resource{name: "VlansHandler", path: "fabrics/{fabric_id}/vlans/", notFound: "Fabric", routes: s.vlansRoutes()})
	// MAAS serves a VLAN by its fabric and VID and, at vlans/{vlan_id}/, by
	// its id; it describes the first.
	s.handle(resource{name: "VlanHandler", path: "fabrics/{fabric_id}/vlans/{vid}/", aliases: []string{"vlans/{vlan_id}/"},
		notFound: "VLAN", routes: s.vlanRoutes()})
	s.handle(resource{name: "SpacesHandler", path: "spaces/", routes: s.spacesRoutes()})
	s.handle(resource{name: "SpaceHandler", path: "spaces/{id}/", routes: s.spaceRoutes()})
	s.handle(resource{name: "StaticRoutesHandler", path: "static-routes/", routes: s.staticRoutesRoutes()})
	s.handle(resource{name: "StaticRouteHandler", path: "static-routes/{id}/", routes: s.staticRouteRoutes()})
	s.handle(resource{name: "IPAddressesHandler", path: "ipaddresses/", routes: s.ipAddressesRoutes()})
	s.handle(resource{name: "ReservedIpsHandler", path: "reservedips/", routes: s.reservedIPsRoutes()})
	s.handle(resource{name: "ReservedIpHandler", path: "reservedips/{id}/", routes: s.reservedIPRoutes()})
	s.handle(resource{name: "BootResourcesHandler", path: "boot-resources/", routes: s.bootResourcesRoutes()})
	s.handle(resource{name: "BootResourceHandler", path: "boot-resources/{id}/", routes: s.bootResourceRoutes()})
	racks, rack := controllerRoutes(s.racks)
	racks = append(racks, post("enrol_secret", adminOnly, s.enrolSecret))
	rack = append(rack, del(adminOnly, s.deleteRack), put(adminOnly, s.grantRack))
	s.handle(resource{name: "RackControllersHandler", path: "rackcontrollers/", routes: racks})
	s.handle(resource{name: "RackControllerHandler", path: "rackcontrollers/{system_id}/", routes: rack})
	regions, region := controllerRoutes(s.regions)
	s.handle(resource{name: "RegionControllersHandler", path: "regioncontrollers/", routes: regions})
	s.handle(resource{name: "RegionControllerHandler", path: "regioncontrollers/{system_id}/", routes: region})
	s.handle(resource{name: "BootSourcesHandler", path: "boot-sources/", routes: s.bootSourcesRoutes()})
	s.handle(resource{name: "BootSourceHandler", path: "boot-sources/{id}/", routes: s.bootSourceRoutes()})
	s.handle(resource{name: "BootSourceSelectionsHandler", path: "boot-sources/{boot_source_id}/selections/",
		notFound: "BootSource", routes: s.bootSourceSelectionsRoutes()})
	s.handle(resource{name: "BootSourceSelectionHandler", path: "boot-sources/{boot_source_id}/selections/{id}/",
		routes: s.bootSourceSelectionRoutes()})
	s.bootResourceStreams()
	s.mux.HandleFunc("GET "+Prefix+"describe/{$}", s.describe)
	s.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		writeText(w, http.StatusNotFound, "Unknown API endpoint: "+r.URL.Path+".")
	})
	s.describeHash = s.descriptionHash()
}
