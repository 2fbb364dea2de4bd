package network

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Specifiers name network objects the way MAAS's allocation constraints
// do: "type:value" where type is one the object knows (a subnet's "cidr",
// "space", "vlan", ...), or a bare value whose meaning depends on its shape
// (an ID, a CIDR, a VID, else a name). A specifier that names objects of
// another kind ("vlan:5" of a subnet) is resolved as that kind's.

// SpecError is a specifier MAAS refuses. NotFound marks MAAS's 404, for a
// specifier that must name exactly one object (a space) and names none.
type SpecError struct {
	Msg      string
	NotFound bool
}

func (e *SpecError) Error() string { return e.Msg }

// spaceUndefined is MAAS's name for "no space".
const spaceUndefined = "undefined"

// splitSpec splits "type:value" when type is one of types.
func splitSpec(spec string, types ...string) (typ, value string) {
	spec = strings.TrimSpace(spec)
	if t, v, ok := strings.Cut(spec, ":"); ok {
		for _, k := range types {
			if t == k {
				return t, strings.TrimSpace(v)
			}
		}
	}
	return "", spec
}

// parseInteger reads a decimal, 0x hexadecimal or 0b binary integer, as
// MAAS's specifiers accept.
func parseInteger(s string) (int, error) {
	s = strings.TrimSpace(s)
	base := 10
	switch l := strings.ToLower(s); {
	case strings.HasPrefix(l, "0x"):
		s, base = s[2:], 16
	case strings.HasPrefix(l, "0b"):
		s, base = s[2:], 2
	}
	n, err := strconv.ParseInt(s, base, 64)
	return int(n), err
}

// objectID reads an ID given as a number or as "<kind>-<n>" (fabric-3).
func objectID(s, kind string) (int, bool) {
	if n, err := parseInteger(s); err == nil {
		return n, true
	}
	if rest, ok := strings.CutPrefix(s, kind+"-"); ok {
		if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
			return n, true
		}
	}
	return 0, false
}

// set is a set of object IDs.
type set map[int]bool

func collect[T any](xs []T, id func(T) int, keep func(T) bool) set {
	out := set{}
	for _, x := range xs {
		if keep(x) {
			out[id(x)] = true
		}
	}
	return out
}

func fabricID(f Fabric) int { return f.ID }
func spaceID(s Space) int   { return s.ID }
func vlanID(v VLAN) int     { return v.ID }
func subnetID(s Subnet) int { return s.ID }

// Fabrics are the fabrics spec names: "name:", "class:", or an ID or name.
func (n *Network) fabricsOf(spec string) set {
	typ, v := splitSpec(spec, "name", "class")
	return collect(n.Fabrics, fabricID, func(f Fabric) bool {
		switch typ {
		case "name":
			return f.Name == v
		case "class":
			return f.ClassType == v
		}
		if id, ok := objectID(v, "fabric"); ok {
			return f.ID == id
		}
		return f.Name == v
	})
}

// spacesOf are the spaces spec names: "name:", "subnet:" (the spaces of
// those subnets' VLANs), or an ID or name.
func (n *Network) spacesOf(spec string) (set, error) {
	typ, v := splitSpec(spec, "name", "subnet")
	if typ == "subnet" {
		subnets, err := n.subnetsOf(v)
		if err != nil {
			return nil, err
		}
		out := set{}
		for _, sn := range n.Subnets {
			if vl, ok := n.VLAN(sn.VLANID); ok && subnets[sn.ID] && vl.SpaceID != 0 {
				out[vl.SpaceID] = true
			}
		}
		return out, nil
	}
	return collect(n.Spaces, spaceID, func(s Space) bool {
		if typ == "" {
			if id, ok := objectID(v, "space"); ok {
				return s.ID == id
			}
		}
		return s.Name == v
	}), nil
}

// oneSpace is the one space spec names ("undefined": none, 0), as MAAS
// insists on for a "space" constraint: none is its 404, several its 403
// (answered here as a refusal too).
func (n *Network) oneSpace(spec string) (int, error) {
	if strings.TrimSpace(spec) == spaceUndefined {
		return 0, nil
	}
	ids, err := n.spacesOf(spec)
	if err != nil {
		return 0, err
	}
	switch len(ids) {
	case 0:
		return 0, &SpecError{Msg: "No Space matches the given query.", NotFound: true}
	case 1:
		for id := range ids {
			return id, nil
		}
	}
	return 0, &SpecError{Msg: "Too many Space objects match the given query."}
}

// vid reads a VLAN tag: a number in 0-4094 or "untagged".
func vid(s string) (int, error) {
	if strings.EqualFold(strings.TrimSpace(s), "untagged") {
		return 0, nil
	}
	n, err := parseInteger(s)
	if err != nil {
		return 0, &SpecError{Msg: fmt.Sprintf("VLAN tag (VID) must be an integer: '%s'.", s)}
	}
	if n < 0 || n >= 0xFFF {
		return 0, &SpecError{Msg: "VLAN tag (VID) out of range (0-4094; 0 for untagged.)"}
	}
	return n, nil
}

// vlansOf are the VLANs spec names: "fabric:", "id:", "name:", "subnet:",
// "space:", "vid:", or a VID ("untagged" for 0) or name.
func (n *Network) vlansOf(spec string) (set, error) {
	typ, v := splitSpec(spec, "fabric", "id", "name", "subnet", "space", "vid")
	var keep func(VLAN) bool
	switch typ {
	case "fabric":
		fs := n.fabricsOf(v)
		keep = func(vl VLAN) bool { return fs[vl.FabricID] }
	case "id":
		id, err := parseInteger(v)
		if err != nil {
			return nil, &SpecError{Msg: fmt.Sprintf("Field 'id' expected a number but got '%s'.", v)}
		}
		keep = func(vl VLAN) bool { return vl.ID == id }
	case "name":
		keep = func(vl VLAN) bool { return vl.Name == v }
	case "subnet":
		subnets, err := n.subnetsOf(v)
		if err != nil {
			return nil, err
		}
		of := set{}
		for _, sn := range n.Subnets {
			if subnets[sn.ID] {
				of[sn.VLANID] = true
			}
		}
		keep = func(vl VLAN) bool { return of[vl.ID] }
	case "space":
		spaces, err := n.spacesOf(v)
		if err != nil {
			return nil, err
		}
		keep = func(vl VLAN) bool { return spaces[vl.SpaceID] }
	default:
		if _, err := parseInteger(v); err != nil && !strings.EqualFold(v, "untagged") && typ == "" {
			keep = func(vl VLAN) bool { return vl.Name == v }
			break
		}
		t, err := vid(v) // a bare number is a VID, as "vid:" is
		if err != nil {
			return nil, err
		}
		keep = func(vl VLAN) bool { return vl.VID == t }
	}
	return collect(n.VLANs, vlanID, keep), nil
}

// parseNetwork reads a CIDR or a bare address (a host prefix), as MAAS's
// IPNetwork does.
func parseNetwork(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

// subnetsOf are the subnets spec names: "cidr:", "fabric:", "id:", "ip:"
// (the subnets holding the address), "name:", "space:", "vid:", "vlan:",
// or an ID, a CIDR, else a name.
func (n *Network) subnetsOf(spec string) (set, error) {
	typ, v := splitSpec(spec, "cidr", "fabric", "id", "ip", "name", "space", "vid", "vlan")
	vlanOf := func(sn Subnet) VLAN { vl, _ := n.VLAN(sn.VLANID); return vl }
	var keep func(Subnet) bool
	switch typ {
	case "cidr":
		p, ok := parseNetwork(v)
		if !ok {
			return nil, &SpecError{Msg: fmt.Sprintf("invalid IPNetwork %s", v)}
		}
		keep = func(sn Subnet) bool { return sn.CIDR.Masked() == p }
	case "fabric":
		fs := n.fabricsOf(v)
		keep = func(sn Subnet) bool { return fs[vlanOf(sn).FabricID] }
	case "id":
		id, err := parseInteger(v)
		if err != nil {
			return nil, &SpecError{Msg: "Subnet ID must be numeric."}
		}
		keep = func(sn Subnet) bool { return sn.ID == id }
	case "ip":
		a, err := netip.ParseAddr(v)
		if err != nil {
			return nil, &SpecError{Msg: fmt.Sprintf("failed to detect a valid IP address from '%s'", v)}
		}
		keep = func(sn Subnet) bool { return sn.CIDR.Contains(a) }
	case "name":
		keep = func(sn Subnet) bool { return sn.Name == v }
	case "space":
		sp, err := n.oneSpace(v)
		if err != nil {
			return nil, err
		}
		keep = func(sn Subnet) bool { return vlanOf(sn).SpaceID == sp }
	case "vid":
		t, err := vid(v)
		if err != nil {
			return nil, err
		}
		keep = func(sn Subnet) bool { return vlanOf(sn).VID == t }
	case "vlan":
		vls, err := n.vlansOf(v)
		if err != nil {
			return nil, err
		}
		keep = func(sn Subnet) bool { return vls[sn.VLANID] }
	default:
		if id, ok := objectID(v, "subnet"); ok {
			keep = func(sn Subnet) bool { return sn.ID == id }
		} else if p, ok := parseNetwork(v); ok {
			keep = func(sn Subnet) bool { return sn.CIDR.Masked() == p }
		} else {
			keep = func(sn Subnet) bool { return sn.Name == v }
		}
	}
	return collect(n.Subnets, subnetID, keep), nil
}

// subnetsOfAll are the subnets any of specs names.
func (n *Network) subnetsOfAll(specs []string) (set, error) {
	return union(specs, n.subnetsOf)
}

// vlansOfAll are the VLANs any of specs names.
func (n *Network) vlansOfAll(specs []string) (set, error) {
	return union(specs, n.vlansOf)
}

func union(specs []string, of func(string) (set, error)) (set, error) {
	out := set{}
	for _, s := range specs {
		ids, err := of(s)
		if err != nil {
			return nil, err
		}
		for id := range ids {
			out[id] = true
		}
	}
	return out, nil
}
