package machine

import (
	"slices"
	"strconv"
)

// LearnMACs adds the MACs the machine lacks, named ethN until an inventory
// names them, and, when it had no interface before, marks bootMAC (or the
// first) as the one it boots from. It returns the MACs added.
func LearnMACs(m *Machine, macs []string, bootMAC string) []string {
	had := len(m.Interfaces)
	var added []string
	for _, mac := range macs {
		if slices.ContainsFunc(m.Interfaces, func(i Interface) bool { return i.MAC == mac }) {
			continue
		}
		m.Interfaces = append(m.Interfaces, Interface{Name: "eth" + strconv.Itoa(len(m.Interfaces)), MAC: mac})
		added = append(added, mac)
	}
	if had == 0 && len(added) > 0 {
		boot := slices.Index(added, bootMAC)
		m.Interfaces[max(boot, 0)].Boot = true
	}
	return added
}
