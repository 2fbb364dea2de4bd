package api

import (
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/fielderr"
	"github.com/anvilmetal/anvil/internal/network"
)

// An interface request's fields are MAAS's form fields (forms/interface.py):
// what is given is applied to the interface, what is not keeps its value,
// and values that do not parse are field errors in Django's words. Whether
// the result is a workable model is network.Validate's to say.

// ifaceForm reads one request's values.
type ifaceForm struct {
	v   url.Values
	err fielderr.Errors
}

func (f *ifaceForm) has(name string) bool { _, ok := f.v[name]; return ok }

func (f *ifaceForm) str(name string) (string, bool) {
	if !f.has(name) {
		return "", false
	}
	return strings.TrimSpace(f.v.Get(name)), true
}

// int reads a whole number from min to MaxInt32 (what the kernel and the
// store take for these); "" is "not given".
func (f *ifaceForm) int(name string, min int, dst *int) {
	s, ok := f.str(name)
	if !ok || s == "" {
		return
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		f.err.Add(name, "Enter a whole number.")
		return
	}
	if n < min {
		f.err.Add(name, "Ensure this value is greater than or equal to %d.", min)
		return
	}
	if n > math.MaxInt32 {
		f.err.Add(name, "Ensure this value is less than or equal to %d.", math.MaxInt32)
		return
	}
	*dst = n
}

// bool reads Django's NullBooleanField spellings; "" is "not given".
func (f *ifaceForm) bool(name string, dst *bool) {
	s, ok := f.str(name)
	if !ok || s == "" {
		return
	}
	switch strings.ToLower(s) {
	case "true", "1", "yes", "on":
		*dst = true
	case "false", "0", "no", "off":
		*dst = false
	default:
		f.err.Add(name, "'%s' value must be either True or False.", s)
	}
}

// choice reads one of choices, in MAAS's invalid-choice words.
func (f *ifaceForm) choice(name string, choices []string, dst *string) {
	s, ok := f.str(name)
	if !ok || s == "" {
		return
	}
	if !slices.Contains(choices, s) {
		f.err.Add(name, "'%s' is not a valid %s.  It should be one of: '%s'.", s, name, strings.Join(choices, "', '"))
		return
	}
	*dst = s
}

// parents reads "parents" (or "parent", which MAAS's create_vlan and
// create_bridge also take) as interface ids of the machine; absent means
// unchanged.
func (f *ifaceForm) parents(m *network.Machine, dst *[]int) {
	field := "parents"
	vals := f.v["parents"]
	if f.has("parent") {
		if f.has("parents") {
			f.err.Add(fielderr.All, "Cannot specify both parent and parents fields.")
			return
		}
		field, vals = "parent", f.v["parent"]
	}
	if vals == nil {
		return
	}
	var out []int
	for _, v := range vals {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			id, err := strconv.Atoi(item)
			if _, ok := m.Interface(id); err != nil || !ok {
				f.err.Add(field, "Select a valid choice. %s is not one of the available choices.", item)
				continue
			}
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	*dst = out
}

// applyIfaceForm applies the request's fields to i, an interface of m (new
// when i.ID is 0), on the network n.
func applyIfaceForm(v url.Values, n *network.Network, m *network.Machine, i *network.Interface) fielderr.Errors {
	f := &ifaceForm{v: v}
	if s, ok := f.str("name"); ok && s != "" {
		i.Name = s
	}
	if s, ok := f.str("mac_address"); ok && s != "" {
		if hw, err := net.ParseMAC(s); err != nil || len(hw) != 6 {
			f.err.Add("mac_address", "'%s' is not a valid MAC address.", s)
		} else {
			i.MAC = hw.String()
		}
	}
	if s, ok := f.str("tags"); ok {
		i.Tags = splitTags(s)
	}
	if s, ok := f.str("vlan"); ok && s != "" {
		id, err := strconv.Atoi(s)
		if _, known := n.VLAN(id); err != nil || !known {
			f.err.Add("vlan", "Select a valid choice. That choice is not one of the available choices.")
		} else {
			i.VLANID = id
		}
	}
	f.int("mtu", network.MinMTU, &i.MTU)
	f.bool("enabled", &i.Enabled)
	if i.Type != network.Physical {
		f.parents(m, &i.Parents)
	}
	switch i.Type {
	case network.Bond:
		var mode string
		f.choice("bond_mode", modeChoices(), &mode)
		if mode != "" {
			i.Bond.Mode = network.BondMode(mode)
		}
		f.int("bond_miimon", 0, &i.Bond.MIIMon)
		f.int("bond_updelay", 0, &i.Bond.UpDelay)
		f.int("bond_downdelay", 0, &i.Bond.DownDelay)
		f.choice("bond_lacp_rate", network.LACPRates, &i.Bond.LACPRate)
		f.choice("bond_xmit_hash_policy", network.XmitHashPolicies, &i.Bond.XmitHashPolicy)
	case network.Bridge:
		var t string
		f.choice("bridge_type", []string{string(network.BridgeStandard), string(network.BridgeOVS)}, &t)
		if t != "" {
			i.Bridge.Type = network.BridgeType(t)
		}
		f.bool("bridge_stp", &i.Bridge.STP)
		if s, ok := f.str("bridge_fd"); ok && s != "" {
			fd := 0
			f.int("bridge_fd", 0, &fd)
			i.Bridge.ForwardDelay = &fd
		}
	}
	return f.err
}

func modeChoices() []string {
	out := make([]string, len(network.BondModes))
	for k, m := range network.BondModes {
		out[k] = string(m)
	}
	return out
}

// splitTags reads MAAS's comma-separated tags field.
func splitTags(s string) []string {
	out := []string{}
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// childDefaults gives a new bond or bridge what MAAS's ChildInterfaceForm
// gives it when the request does not: its first parent's MAC and VLAN;
// and a new VLAN interface its name, parent.vid.
func childDefaults(v url.Values, n *network.Network, m *network.Machine, i *network.Interface) {
	if len(i.Parents) == 0 {
		return
	}
	first, _ := m.Interface(i.Parents[0])
	switch i.Type {
	case network.Bond, network.Bridge:
		if _, given := v["mac_address"]; !given && i.MAC == "" {
			i.MAC = first.MAC
		}
		if _, given := v["vlan"]; !given && i.VLANID == 0 {
			i.VLANID = first.VLANID
		}
	case network.VLANIf:
		if vl, ok := n.VLAN(i.VLANID); ok && i.Name == "" {
			i.Name = first.Name + "." + strconv.Itoa(vl.VID)
		}
	}
}

// nextEthName is the first ethN no interface of m has.
func nextEthName(m *network.Machine) string {
	for k := 0; ; k++ {
		name := "eth" + strconv.Itoa(k)
		if !slices.ContainsFunc(m.Interfaces, func(i network.Interface) bool { return i.Name == name }) {
			return name
		}
	}
}
