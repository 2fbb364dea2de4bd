package network

import (
	"slices"
	"strings"
)

// BondMode is one of the Linux bonding driver's modes, as MAAS names them.
type BondMode string

// The bond modes MAAS offers; the first is its default.
var BondModes = []BondMode{"balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"}

// The choices MAAS offers for a bond's LACP rate and transmit hash policy;
// the first of each is its default.
var (
	LACPRates        = []string{"fast", "slow"}
	XmitHashPolicies = []string{"layer2", "layer2+3", "layer3+4", "encap2+3", "encap3+4"}
)

// BondParams are a bond's parameters under MAAS's names (bond_mode,
// bond_miimon, ...). Empty strings take MAAS's defaults (see Defaults).
type BondParams struct {
	Mode           BondMode
	MIIMon         int // milliseconds
	UpDelay        int
	DownDelay      int
	LACPRate       string
	XmitHashPolicy string
}

// DefaultMIIMon is MAAS's default bond_miimon.
const DefaultMIIMon = 100

// Defaults fills what is unset with MAAS's defaults: a bond made through
// MAAS's API without parameters is balance-rr, miimon 100.
func (p BondParams) Defaults() BondParams {
	if p.Mode == "" {
		p.Mode = BondModes[0]
	}
	if p.MIIMon == 0 {
		p.MIIMon = DefaultMIIMon
	}
	if p.LACPRate == "" {
		p.LACPRate = LACPRates[0]
	}
	if p.XmitHashPolicy == "" {
		p.XmitHashPolicy = XmitHashPolicies[0]
	}
	return p
}

// Validate checks the parameters' values, in MAAS's field names.
func (p BondParams) Validate() FieldErrors {
	var e FieldErrors
	if p.Mode != "" && !slices.Contains(BondModes, p.Mode) {
		e.Add("bond_mode", "%s", invalidChoice("bond_mode", string(p.Mode), modeNames()))
	}
	if p.LACPRate != "" && !slices.Contains(LACPRates, p.LACPRate) {
		e.Add("bond_lacp_rate", "%s", invalidChoice("bond_lacp_rate", p.LACPRate, LACPRates))
	}
	if p.XmitHashPolicy != "" && !slices.Contains(XmitHashPolicies, p.XmitHashPolicy) {
		e.Add("bond_xmit_hash_policy", "%s", invalidChoice("bond_xmit_hash_policy", p.XmitHashPolicy, XmitHashPolicies))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"bond_miimon", p.MIIMon}, {"bond_updelay", p.UpDelay}, {"bond_downdelay", p.DownDelay}} {
		if f.v < 0 {
			e.Add(f.name, "Ensure this value is greater than or equal to 0.")
		}
	}
	return e
}

func modeNames() []string {
	out := make([]string, len(BondModes))
	for i, m := range BondModes {
		out[i] = string(m)
	}
	return out
}

// invalidChoice words a bad choice as MAAS's forms do.
func invalidChoice(field, value string, choices []string) string {
	return "'" + value + "' is not a valid " + field + ".  It should be one of: '" + strings.Join(choices, "', '") + "'."
}

// validateBond checks a bond's parents: at least one, each a physical
// interface of the machine, none already a parent of another interface,
// all on the bond's VLAN.
func validateBond(m *Machine, b Interface) FieldErrors {
	e := b.Bond.Validate()
	if len(b.Parents) == 0 {
		e.Add("parents", "A bond interface must have one or more parents.")
		return e
	}
	var inUse []string
	for _, id := range b.Parents {
		p, ok := m.Interface(id)
		if !ok {
			e.Add("parents", "Interface %d is not an interface of this machine.", id)
			continue
		}
		if p.Type != Physical {
			e.Add("parents", "A bond's parents must be physical interfaces; %s is a %s.", p.Name, p.Type)
		}
		if len(m.Children(id, b.ID)) > 0 {
			inUse = append(inUse, p.Name)
		}
		if p.VLANID != b.VLANID {
			e.Add("parents", "All parents must belong to the same VLAN.")
		}
	}
	if len(inUse) > 0 {
		slices.Sort(inUse)
		e.Add("parents", "Interfaces already in-use: %s.", strings.Join(inUse, ", "))
	}
	return e
}
