package serve

import (
	"context"
	"net/netip"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/powerroute"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/store"
)

// RackPower says how this process's power commands are run. Power always
// runs on racks, which claim requests through the API: by default the
// rack in this process does, over loopback, the same way a remote rack
// does (one path).
type RackPower struct {
	// Remote leaves every command to racks elsewhere: this process runs
	// no power worker.
	Remote bool
	// BMCNetworks are the networks whose BMCs this process's rack
	// reaches, with the subnets of its interfaces; when none are given
	// it reaches every BMC (0.0.0.0/0 and ::/0), as the region process
	// always did before racks ran power.
	BMCNetworks []netip.Prefix
}

// everywhere are the networks of a rack that reaches every BMC its host
// can route to.
var everywhere = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}

// ownRackGrant is what this process's rack is trusted with: the BMC
// networks given (every BMC when none are) and every subnet, for its
// addresses are this host's.
func ownRackGrant(p RackPower) store.RackGrant {
	nets := p.BMCNetworks
	if len(nets) == 0 {
		nets = everywhere
	}
	return store.RackGrant{BMCNetworks: powerroute.Strings(nets), Subnets: powerroute.Strings(everywhere)}
}

// startPower runs this process's power worker against its own API.
func (s *Server) startPower(ctx context.Context, cfg Config) error {
	if cfg.RackPower.Remote {
		return nil
	}
	creds, err := rackCredentials(ctx, s.Store, cfg)
	if err != nil {
		return err
	}
	cl, err := client.New("http://"+loopback(s.Addr)+"/MAAS/", creds.APIKey)
	if err != nil {
		return err
	}
	cl.UserAgent = rack.RackAgent + Version
	pc := rack.PowerConfig{ID: rack.PowerIDFor(creds.SystemID), Networks: cfg.RackPower.BMCNetworks, InterfaceNetworks: true, Drivers: s.Service.Power.Drivers(),
		Power: cfg.Power, Concurrency: cfg.Power.Workers, Log: cfg.Log}
	if len(pc.Networks) == 0 {
		pc.Networks, pc.InterfaceNetworks = everywhere, false
	}
	w, err := rack.StartPower(ctx, cl, pc)
	if err != nil {
		return err
	}
	s.PowerWorker = w
	if s.Rack != nil {
		s.Rack.ReportPower(w)
	}
	return nil
}
