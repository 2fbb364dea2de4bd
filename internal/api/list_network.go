package api

import (
	"context"
	"encoding/json"
	"hash/fnv"

	"github.com/anvilmetal/anvil/internal/machine"
)

// listNet is what a machine list needs to show each machine's network
// model: the site's network, read once, and a stamp of it. A machine's
// rendering depends on its own rows, which bump its version when they
// change, and on the site's fabrics, VLANs, spaces and subnets, which a
// link's JSON carries: the render cache checks both.
type listNet struct {
	view  ifaceView
	stamp uint64
}

func (s *Server) loadListNet(ctx context.Context) (*listNet, error) {
	n, err := s.store.LoadNetwork(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.loadIfaceView(ctx, n)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(struct {
		N                          any
		Fabrics, VLANs, Spaces, Sn any
	}{n, v.v.fabrics, v.v.vlans, v.v.spaces, v.v.subnets})
	if err != nil {
		return nil, err
	}
	h := fnv.New64a()
	h.Write(b)
	return &listNet{view: v, stamp: h.Sum64()}, nil
}

// dressers returns, for each of ms, what lays its network model on its
// list rendering. The interfaces are read after the machines, so that a
// rendering is never newer in its rows than in its interfaces' version:
// an interface written in between bumps the version and the entry is
// simply rendered again next time.
func (s *Server) dressers(ctx context.Context, ln *listNet, ms []machine.Machine) (map[string]func(*machineJSON), error) {
	ids := make([]string, len(ms))
	for i := range ms {
		ids[i] = ms[i].SystemID
	}
	_, nets, err := s.store.MachineNetworks(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]func(*machineJSON), len(ms))
	for i := range ms {
		m, nm := &ms[i], nets[ms[i].SystemID]
		if nm == nil {
			continue
		}
		out[m.SystemID] = func(j *machineJSON) { ln.view.overlay(j, m, nm, nm.GatewayLink4, nm.GatewayLink6) }
	}
	return out, nil
}
