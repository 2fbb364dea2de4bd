package api

import (
	"errors"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/network"
)

// netAsk is an allocation's network constraints as given: the labelled
// interfaces map and the machine-wide lists. Resolving them needs the
// site's network, which is read with the candidates' interfaces.
type netAsk struct {
	labels  []network.LabelConstraint
	machine network.MachineConstraints
}

// parseNetAsk reads the network constraints of an allocation; nil when
// none is given. Only the syntax is checked here.
func parseNetAsk(r *request) (*netAsk, error) {
	labels, err := network.ParseInterfaces(r.form.Get("interfaces"))
	if err != nil {
		return nil, badField("interfaces", "%v", err)
	}
	a := &netAsk{labels: labels, machine: network.MachineConstraints{
		Fabrics: list(r, "fabrics"), NotFabrics: list(r, "not_fabrics"),
		FabricClasses: list(r, "fabric_classes"), NotFabricClasses: list(r, "not_fabric_classes"),
		Subnets: list(r, "subnets"), NotSubnets: list(r, "not_subnets"),
		VLANs: list(r, "vlans"), NotVLANs: list(r, "not_vlans"),
		Spaces: list(r, "spaces"), NotSpaces: list(r, "not_spaces"),
	}}
	if len(a.labels) == 0 && a.machine.Empty() {
		return nil, nil
	}
	return a, nil
}

// netMatch is netAsk resolved against the site's network.
type netMatch struct {
	ifaces  *network.InterfaceMatcher
	machine *network.MachineMatcher
}

// compile resolves the constraints against n, refusing them as MAAS does:
// a space that does not exist is its 404, other bad specifiers 400s on
// their field.
func (a *netAsk) compile(n *network.Network) (*netMatch, error) {
	mm, err := network.CompileMachine(n, a.machine)
	if err != nil {
		return nil, netRefusal("", err)
	}
	im, err := network.CompileInterfaces(n, a.labels)
	if err != nil {
		return nil, netRefusal("interfaces", err)
	}
	return &netMatch{ifaces: im, machine: mm}, nil
}

func netRefusal(field string, err error) error {
	var se *network.SpecError
	var ce *network.ConstraintError
	switch {
	case errors.As(err, &se) && se.NotFound:
		return noSuch("Space")
	case errors.As(err, &se):
		return badField(field, "%s", se.Msg)
	case errors.As(err, &ce):
		return badField(ce.Field, "%s", ce.Msg)
	}
	return err
}

// match decides one machine, with nm its interfaces: whether it fits and,
// per label, the interfaces that matched.
func (nm *netMatch) match(m *machine.Machine, ifaces *network.Machine) (map[string][]int, bool) {
	if ifaces == nil {
		ifaces = &network.Machine{}
	}
	if !nm.machine.Match(ifaces) {
		return nil, false
	}
	node := &network.Node{Hostname: m.Hostname, Net: ifaces, Speeds: linkSpeeds(m, ifaces)}
	return nm.ifaces.Match(node)
}

// linkSpeeds are the speeds commissioning saw on the machine's NICs, by
// the ID of the interface of the same MAC.
func linkSpeeds(m *machine.Machine, ifaces *network.Machine) map[int]int {
	out := map[int]int{}
	if m.Inventory == nil {
		return out
	}
	for _, i := range ifaces.Interfaces {
		for _, nic := range m.Inventory.NICs {
			if i.MAC != "" && strings.EqualFold(nic.MAC, i.MAC) {
				out[i.ID] = nic.SpeedMbps
			}
		}
	}
	return out
}

// interfaceMatches is MAAS's constraints_by_type "interfaces": each label
// with the IDs of the machine's interfaces that matched it.
func interfaceMatches(got map[string][]int) map[string][]int64 {
	out := make(map[string][]int64, len(got))
	for label, ids := range got {
		for _, id := range ids {
			out[label] = append(out[label], int64(id))
		}
	}
	return out
}
