// Package api serves MAAS's REST API 2.0 under /MAAS/api/2.0/: OAuth 1.0
// PLAINTEXT authentication, op= dispatch, form-encoded requests and JSON
// answers shaped as MAAS shapes them, so that existing MAAS clients work.
// It translates HTTP to calls on the region service and decides nothing
// about the lifecycle itself.
package api

import (
	"log/slog"
	"net/http"
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
}

// Server is the API's http.Handler.
type Server struct {
	store store.Store
	svc   *region.Service
	log   *slog.Logger
	opts  Options
	mux   *http.ServeMux
	cache *renderCache
}

// New builds the API over a region service.
func New(svc *region.Service, log *slog.Logger, opts Options) *Server {
	if opts.MaxBody == 0 {
		opts.MaxBody = 1 << 20
	}
	if opts.WatchPoll == 0 {
		opts.WatchPoll = 2 * time.Second
	}
	s := &Server{store: svc.Store, svc: svc, log: log, opts: opts, mux: http.NewServeMux(), cache: newRenderCache()}
	s.routes()
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) routes() {
	s.handle("version/", s.versionRoutes()...)
	s.handle("maas/", s.maasRoutes()...)
	s.handle("users/", s.userRoutes()...)
	s.handle("sshkeys/", s.sshKeysRoutes()...)
	s.handle("sshkeys/{id}/", s.sshKeyRoutes()...)
	s.handle("account/prefs/sshkeys/", s.sshKeysRoutes()...)
	s.handle("account/prefs/sshkeys/{id}/", s.sshKeyRoutes()...)
	s.handle("machines/", s.machinesRoutes()...)
	s.handle("machines/{id}/", s.machineRoutes()...)
	s.handle("zones/", s.zonesRoutes()...)
	s.handle("zones/{id}/", s.zoneRoutes()...)
	// MAAS serves pools at resourcepools/ and resourcepool/<id>/; older
	// clients (gomaasapi) ask for pools/.
	s.handle("resourcepools/", s.poolsRoutes()...)
	s.handle("pools/", s.poolsRoutes()...)
	s.handle("resourcepool/{id}/", s.poolRoutes()...)
	s.handle("pools/{id}/", s.poolRoutes()...)
	s.handle("tags/", s.tagsRoutes()...)
	s.handle("tags/{id}/", s.tagRoutes()...)
	s.handle("events/", s.eventsRoutes()...)
	s.handle("rack/", s.rackRoutes()...)
	s.handle("discoveries/", s.discoveriesRoutes()...)
	s.handle("subnets/", s.subnetsRoutes()...)
	s.handle("subnets/{id}/", s.subnetRoutes()...)
	s.handle("ipranges/", s.ipRangesRoutes()...)
	s.handle("ipranges/{id}/", s.ipRangeRoutes()...)
	s.handle("boot-resources/", s.bootResourcesRoutes()...)
	s.handle("boot-resources/{id}/", s.bootResourceRoutes()...)
	s.bootResourceStreams()
	s.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		writeText(w, http.StatusNotFound, "Unknown API endpoint: "+r.URL.Path)
	})
}
