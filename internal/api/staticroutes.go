package api

import (
	"errors"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

func init() {
	addDocs(map[string]string{
		"StaticRoutesHandler":        "Static routes: traffic from machines on a source subnet to a destination subnet goes via a gateway.",
		"StaticRoutesHandler read":   doc("List the static routes."),
		"StaticRoutesHandler create": doc("Create a static route (administrators).", with("", routeParams(true))...),
		"StaticRouteHandler":         "One static route, by its id.",
		"StaticRouteHandler read":    doc("Read a static route."),
		"StaticRouteHandler update":  doc("Change a static route (administrators).", with("", routeParams(false))...),
		"StaticRouteHandler delete":  doc("Delete a static route (administrators)."),
	})
}

func routeParams(create bool) []string {
	p := opt
	if create {
		p = req
	}
	return []string{
		p("source", "string", "The source subnet's id, name or CIDR."),
		p("destination", "string", "The destination subnet's id, name or CIDR."),
		p("gateway_ip", "string", "The router, an address in the source subnet."),
		opt("metric", "integer", "The route's weight (0 when not given)."),
	}
}

// routeJSON is MAAS's static route (DISPLAYED_STATIC_ROUTE_FIELDS).
type routeJSON struct {
	ID          int64      `json:"id"`
	Source      subnetJSON `json:"source"`
	Destination subnetJSON `json:"destination"`
	GatewayIP   string     `json:"gateway_ip"`
	Metric      int        `json:"metric"`
	ResourceURI string     `json:"resource_uri"`
}

func (v *netView) renderRoute(rt store.StaticRoute) routeJSON {
	return routeJSON{ID: rt.ID, Source: v.renderSubnet(v.subnet(rt.SourceID)), Destination: v.renderSubnet(v.subnet(rt.DestinationID)),
		GatewayIP: rt.GatewayIP, Metric: rt.Metric, ResourceURI: Prefix + "static-routes/" + itoa(rt.ID) + "/"}
}

func (s *Server) staticRoutesRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			rts, err := s.store.ListStaticRoutes(r.Context())
			if err != nil {
				return err
			}
			v, err := s.netView(r.Context())
			if err != nil {
				return err
			}
			out := make([]routeJSON, 0, len(rts))
			for _, rt := range rts {
				out = append(out, v.renderRoute(rt))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			return s.saveRoute(w, r, store.StaticRoute{}, true)
		}),
	}
}

// saveRoute applies the form and checks the route with the network
// model's rule: same family, not to itself, a gateway in the source.
func (s *Server) saveRoute(w http.ResponseWriter, r *request, rt store.StaticRoute, create bool) error {
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"source", &rt.SourceID}, {"destination", &rt.DestinationID}} {
		ref := strings.TrimSpace(r.form.Get(f.name))
		if ref == "" {
			if create {
				return badField(f.name, "This field is required.")
			}
			continue
		}
		sn, err := s.subnetByRef(r, ref)
		if err != nil {
			return badField(f.name, "Select a valid choice. That choice is not one of the available choices.")
		}
		*f.dst = sn.ID
	}
	if val, ok := r.form["gateway_ip"]; ok || create {
		a, err := netip.ParseAddr(strings.TrimSpace(first(val)))
		if err != nil {
			return badField("gateway_ip", "Enter a valid IPv4 or IPv6 address.")
		}
		rt.GatewayIP = a.String()
	}
	if val, ok := r.form["metric"]; ok {
		m, err := strconv.Atoi(strings.TrimSpace(first(val)))
		if err != nil {
			return badField("metric", "Enter a whole number.")
		}
		if m > math.MaxInt32 { // the store's column; negatives are the model's to refuse
			return badField("metric", "Ensure this value is less than or equal to %d.", math.MaxInt32)
		}
		rt.Metric = m
	}
	n, err := s.store.LoadNetwork(r.Context())
	if err != nil {
		return err
	}
	dst, _ := n.Subnet(int(rt.DestinationID))
	gw, _ := netip.ParseAddr(rt.GatewayIP)
	if err := network.ValidateRoute(n, network.StaticRoute{ID: int(rt.ID), SourceID: int(rt.SourceID), Destination: dst.CIDR,
		Gateway: gw, Metric: rt.Metric}).Err(); err != nil {
		return err
	}
	if create {
		rt, err = s.store.CreateStaticRoute(r.Context(), rt)
	} else {
		rt, err = s.store.UpdateStaticRoute(r.Context(), rt)
	}
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		return badField("__all__", "Static route with this Source, Destination and Gateway ip already exists.")
	}
	if err != nil {
		return err
	}
	v, err := s.netView(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v.renderRoute(rt))
	return nil
}

func (s *Server) staticRouteRoutes() []route {
	byID := func(r *request) (store.StaticRoute, error) {
		id, err := pathID(r.id, "StaticRoute")
		if err != nil {
			return store.StaticRoute{}, err
		}
		return s.store.GetStaticRoute(r.Context(), id)
	}
	return objectRoutes(s, byID, func(_ *request, v *netView, rt store.StaticRoute) any { return v.renderRoute(rt) },
		func(w http.ResponseWriter, r *request, rt store.StaticRoute) error {
			return s.saveRoute(w, r, rt, false)
		},
		func(r *request, rt store.StaticRoute) error { return s.store.DeleteStaticRoute(r.Context(), rt.ID) })
}
