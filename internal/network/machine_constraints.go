package network

// MachineConstraints are MAAS's machine-wide network constraints: a
// machine matches when one of its interfaces is on one of the fabrics
// (by name), fabric classes, VLANs (by specifier) and spaces (by name)
// asked for, it has links on every subnet the subnet specifiers name
// together, and on none of the not_ ones.
type MachineConstraints struct {
	Fabrics, NotFabrics             []string
	FabricClasses, NotFabricClasses []string
	Subnets, NotSubnets             []string
	VLANs, NotVLANs                 []string
	Spaces, NotSpaces               []string
}

// Empty reports whether c asks for nothing.
func (c MachineConstraints) Empty() bool {
	for _, l := range [][]string{c.Fabrics, c.NotFabrics, c.FabricClasses, c.NotFabricClasses, c.Subnets, c.NotSubnets,
		c.VLANs, c.NotVLANs, c.Spaces, c.NotSpaces} {
		if len(l) > 0 {
			return false
		}
	}
	return true
}

// ConstraintError is a machine-wide constraint MAAS's form refuses: a 400
// naming the field.
type ConstraintError struct {
	Field string
	Msg   string
}

func (e *ConstraintError) Error() string { return e.Field + ": " + e.Msg }

// MachineMatcher is MachineConstraints resolved against the site's network.
type MachineMatcher struct {
	n                   *Network
	c                   MachineConstraints
	subnets, notSubnets set
	vlans, notVLANs     set
}

// CompileMachine resolves c against n. Subnet and VLAN specifiers that
// name nothing are refused, as MAAS refuses them (fabric and space names
// are not checked: they match nothing). Errors are *ConstraintError, or
// the *SpecError of a space that must exist.
func CompileMachine(n *Network, c MachineConstraints) (*MachineMatcher, error) {
	m := &MachineMatcher{n: n, c: c}
	resolve := func(field, plural string, specs []string, of func([]string) (set, error)) (set, error) {
		if len(specs) == 0 {
			return nil, nil
		}
		ids, err := of(specs)
		if se, ok := err.(*SpecError); ok && !se.NotFound {
			return nil, &ConstraintError{Field: field, Msg: se.Msg}
		}
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return nil, &ConstraintError{Field: field, Msg: "No matching " + plural + " found."}
		}
		return ids, nil
	}
	var err error
	if m.subnets, err = resolve("subnets", "subnets", c.Subnets, n.subnetsOfAll); err != nil {
		return nil, err
	}
	if m.notSubnets, err = resolve("not_subnets", "subnets", c.NotSubnets, n.subnetsOfAll); err != nil {
		return nil, err
	}
	if m.vlans, err = resolve("vlans", "vlans", c.VLANs, n.vlansOfAll); err != nil {
		return nil, err
	}
	if m.notVLANs, err = resolve("not_vlans", "vlans", c.NotVLANs, n.vlansOfAll); err != nil {
		return nil, err
	}
	return m, nil
}

// Match reports whether the machine with interfaces nm matches.
func (m *MachineMatcher) Match(nm *Machine) bool {
	var fabrics, classes, spaces []string
	vlans, subnets := set{}, set{}
	for _, i := range nm.Interfaces {
		if vl, ok := m.n.VLAN(i.VLANID); ok {
			vlans[vl.ID] = true
			for _, f := range m.n.Fabrics {
				if f.ID == vl.FabricID {
					fabrics, classes = append(fabrics, f.Name), append(classes, f.ClassType)
				}
			}
			for _, s := range m.n.Spaces {
				if s.ID == vl.SpaceID {
					spaces = append(spaces, s.Name)
				}
			}
		}
		for _, l := range i.Links {
			if l.SubnetID != 0 {
				subnets[l.SubnetID] = true
			}
		}
	}
	wantAny := func(want, have []string) bool { return len(want) == 0 || anyIn(want, have) }
	if !wantAny(m.c.Fabrics, fabrics) || anyIn(m.c.NotFabrics, fabrics) ||
		!wantAny(m.c.FabricClasses, classes) || anyIn(m.c.NotFabricClasses, classes) ||
		!wantAny(m.c.Spaces, spaces) || anyIn(m.c.NotSpaces, spaces) {
		return false
	}
	for id := range m.subnets {
		if !subnets[id] {
			return false
		}
	}
	if m.vlans != nil && !overlaps(m.vlans, vlans) {
		return false
	}
	return !overlaps(m.notSubnets, subnets) && !overlaps(m.notVLANs, vlans)
}

func anyIn(want, have []string) bool {
	for _, w := range want {
		for _, h := range have {
			if w == h {
				return true
			}
		}
	}
	return false
}

func overlaps(a, b set) bool {
	for id := range a {
		if b[id] {
			return true
		}
	}
	return false
}
