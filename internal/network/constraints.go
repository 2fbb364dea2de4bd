package network

import (
	"fmt"
	"regexp"
	"strings"
)

// MAAS's "interfaces" allocation constraint is a labelled map,
// "label:key=value[,key=value];label2:...": each label asks for an
// interface matching all its keys (any of a key's values; none of a not_
// key's). The answer says which interfaces matched each label.

// LabelConstraint is one label of an interfaces constraint: its keys in
// the order given, each with its values.
type LabelConstraint struct {
	Label  string
	Keys   []string
	Values map[string][]string
}

var labelName = regexp.MustCompile(`^[a-zA-Z0-9]+[a-zA-Z0-9_-]*$`)

// interfaceKeys are the keys MAAS's interfaces constraint knows.
var interfaceKeys = map[string]bool{
	"id": true, "not_id": true, "fabric": true, "not_fabric": true, "fabric_class": true, "not_fabric_class": true,
	"ip": true, "not_ip": true, "mode": true, "name": true, "not_name": true, "hostname": true, "not_hostname": true,
	"subnet": true, "not_subnet": true, "space": true, "not_space": true, "subnet_cidr": true, "not_subnet_cidr": true,
	"type": true, "vlan": true, "not_vlan": true, "vid": true, "not_vid": true, "tag": true, "not_tag": true, "link_speed": true,
}

// ParseInterfaces reads an interfaces constraint, refusing (in MAAS's
// words) what MAAS's form refuses. A value of one character or less is
// no constraint.
func ParseInterfaces(value string) ([]LabelConstraint, error) {
	if len(value) <= 1 {
		return nil, nil
	}
	var out []LabelConstraint
	seen := map[string]bool{}
	for _, c := range strings.Split(value, ";") {
		label, rest, ok := strings.Cut(c, ":")
		if !ok {
			return nil, fmt.Errorf("Malformed constraint: '%s' (required format: '<label>:<key>=<value>[,<key2>=<value2>[,...]]')", c)
		}
		if !labelName.MatchString(label) {
			return nil, fmt.Errorf("Invalid label name: '%s' (Must begin with an alphanumeric character, and include only alphanumeric characters, dashes, and underscores.)", label)
		}
		if seen[label] {
			return nil, fmt.Errorf("Constraint label defined more than once: '%s'", label)
		}
		seen[label] = true
		lc := LabelConstraint{Label: label, Values: map[string][]string{}}
		for _, kv := range strings.Split(rest, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("Malformed key/value pair in constraint: '%s'", kv)
			}
			if _, dup := lc.Values[k]; !dup {
				lc.Keys = append(lc.Keys, k)
			}
			lc.Values[k] = append(lc.Values[k], v)
		}
		for _, k := range lc.Keys {
			if !interfaceKeys[k] {
				return nil, fmt.Errorf("Unknown interfaces constraint: '%s'", k)
			}
		}
		out = append(out, lc)
	}
	return out, nil
}

// Node is what matching reads of one machine: its hostname, its
// interfaces and the link speed (Mbit/s) seen on each, by interface ID.
type Node struct {
	Hostname string
	Net      *Machine
	Speeds   map[int]int
}

// ifacePred decides whether one interface of node matches.
type ifacePred func(node *Node, i Interface) bool

// InterfaceMatcher is an interfaces constraint resolved against the site's
// network: what names objects has been looked up once, so that matching
// many machines is cheap and any refusal comes before any machine is
// looked at.
type InterfaceMatcher struct {
	n      *Network
	labels []string
	preds  [][]ifacePred // per label, every one must hold
}

// CompileInterfaces resolves cs against n. Errors are *SpecError (a bad
// or unknown specifier) in MAAS's words.
func CompileInterfaces(n *Network, cs []LabelConstraint) (*InterfaceMatcher, error) {
	m := &InterfaceMatcher{n: n}
	for _, c := range cs {
		var preds []ifacePred
		for _, k := range c.Keys {
			p, err := keyPred(n, k, c.Values[k])
			if err != nil {
				return nil, err
			}
			preds = append(preds, p)
		}
		m.labels = append(m.labels, c.Label)
		m.preds = append(m.preds, preds)
	}
	return m, nil
}

// keyPred is one key's predicate: any of its values matches, or for a
// not_ key, none does.
func keyPred(n *Network, key string, values []string) (ifacePred, error) {
	base, negate := strings.CutPrefix(key, "not_")
	var alts []ifacePred
	for _, v := range values {
		p, err := valuePred(n, base, v)
		if err != nil {
			return nil, err
		}
		alts = append(alts, p)
	}
	return func(node *Node, i Interface) bool {
		for _, p := range alts {
			if p(node, i) {
				return !negate
			}
		}
		return negate
	}, nil
}

// valuePred is the predicate of one key=value.
func valuePred(n *Network, key, v string) (ifacePred, error) {
	vlanOf := func(i Interface) (VLAN, bool) { return n.VLAN(i.VLANID) }
	fabricOf := func(i Interface) (Fabric, bool) {
		if vl, ok := vlanOf(i); ok {
			for _, f := range n.Fabrics {
				if f.ID == vl.FabricID {
					return f, true
				}
			}
		}
		return Fabric{}, false
	}
	onSubnets := func(ids set) ifacePred {
		return func(_ *Node, i Interface) bool {
			for _, l := range i.Links {
				if l.SubnetID != 0 && ids[l.SubnetID] {
					return true
				}
			}
			return false
		}
	}
	switch key {
	case "id":
		id, err := parseInteger(v)
		if err != nil {
			return nil, &SpecError{Msg: "Interface ID must be numeric."}
		}
		return func(_ *Node, i Interface) bool { return i.ID == id }, nil
	case "fabric":
		fs := n.fabricsOf(v)
		return func(_ *Node, i Interface) bool { f, ok := fabricOf(i); return ok && fs[f.ID] }, nil
	case "fabric_class":
		return func(_ *Node, i Interface) bool { f, ok := fabricOf(i); return ok && f.ClassType == v }, nil
	case "ip":
		return func(_ *Node, i Interface) bool { return hasIP(i, v) }, nil
	case "mode":
		if !strings.EqualFold(strings.TrimSpace(v), "unconfigured") {
			return nil, &SpecError{Msg: "The only valid value for 'mode' is 'unconfigured'."}
		}
		return func(_ *Node, i Interface) bool { return unconfigured(i) }, nil
	case "name":
		return func(_ *Node, i Interface) bool { return i.Name == v }, nil
	case "hostname":
		return func(node *Node, _ Interface) bool { return node.Hostname == v }, nil
	case "subnet":
		ids, err := n.subnetsOf(v)
		if err != nil {
			return nil, err
		}
		return onSubnets(ids), nil
	case "subnet_cidr":
		ids, err := n.subnetsOf("cidr:" + v)
		if err != nil {
			return nil, err
		}
		return onSubnets(ids), nil
	case "space":
		sp, err := n.oneSpace(v)
		if err != nil {
			return nil, err
		}
		return func(_ *Node, i Interface) bool { vl, _ := vlanOf(i); return vl.SpaceID == sp }, nil
	case "type":
		return func(_ *Node, i Interface) bool { return string(i.Type) == v }, nil
	case "vlan":
		ids, err := n.vlansOf(v)
		if err != nil {
			return nil, err
		}
		return func(_ *Node, i Interface) bool { return ids[i.VLANID] }, nil
	case "vid":
		t, err := vid(v)
		if err != nil {
			return nil, err
		}
		return func(_ *Node, i Interface) bool { vl, ok := vlanOf(i); return ok && vl.VID == t }, nil
	case "tag":
		want := strings.Split(v, "&&")
		return func(_ *Node, i Interface) bool { return hasAll(i.Tags, want) }, nil
	case "link_speed":
		var min float64
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%g", &min); err != nil {
			return nil, &SpecError{Msg: "Invalid link speed: number required."}
		}
		return func(node *Node, i Interface) bool { return float64(node.Speeds[i.ID]) >= min }, nil
	}
	return nil, &SpecError{Msg: fmt.Sprintf("Unknown interfaces constraint: '%s'", key)}
}

func hasIP(i Interface, v string) bool {
	for _, l := range i.Links {
		if l.IP.IsValid() && (l.IP.String() == v || l.IP.StringExpanded() == v) {
			return true
		}
	}
	return false
}

// unconfigured is MAAS's mode=unconfigured: an interface with no links,
// or with a link that holds no address.
func unconfigured(i Interface) bool {
	if len(i.Links) == 0 {
		return true
	}
	for _, l := range i.Links {
		if !l.IP.IsValid() {
			return true
		}
	}
	return false
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Match reports whether node has, for every label, an interface matching
// it, and which interfaces (by ID, in the machine's order) matched each.
// Labels may share an interface, as in MAAS.
func (m *InterfaceMatcher) Match(node *Node) (map[string][]int, bool) {
	out := make(map[string][]int, len(m.labels))
	for k, label := range m.labels {
		var ids []int
		for _, i := range node.Net.Interfaces {
			if all(m.preds[k], node, i) {
				ids = append(ids, i.ID)
			}
		}
		if len(ids) == 0 {
			return nil, false
		}
		out[label] = ids
	}
	return out, true
}

func all(preds []ifacePred, node *Node, i Interface) bool {
	for _, p := range preds {
		if !p(node, i) {
			return false
		}
	}
	return true
}
