package dhcpshare

import "github.com/anvilmetal/anvil/internal/fielderr"

// Form is a VLAN update's rack fields, already resolved to system ids:
// nil when the update leaves the field alone, "" when it clears it.
type Form struct {
	Primary, Secondary *string
}

// SetRacks applies form to a VLAN's stored racks cur, with MAAS's rules
// (forms/vlan.py), or says why not in MAAS's words, as non-field errors:
//
//   - clearing the primary promotes the stored secondary to primary;
//   - making the stored secondary the primary clears the secondary;
//   - the stored primary cannot become the secondary ("... is already set
//     as the primary rack controller"), nor can both be one rack;
//   - a secondary needs a primary (MAAS lets one stand alone, and then
//     serves no failover; here the two racks split the ranges, which
//     needs the primary's half to exist).
//
// One update may swap the two (primary=B, secondary=A): MAAS's rules,
// taken one at a time, would refuse it or drop a rack.
func SetRacks(cur Racks, form Form) (Racks, fielderr.Errors) {
	out := cur
	if form.Primary != nil {
		out.Primary = *form.Primary
	}
	if form.Secondary != nil {
		out.Secondary = *form.Secondary
	}
	swap := form.Primary != nil && form.Secondary != nil && cur.Primary != "" && cur.Secondary != "" &&
		out.Primary == cur.Secondary && out.Secondary == cur.Primary
	switch {
	case swap:
	case form.Secondary == nil && out.Primary == "" && cur.Secondary != "":
		out.Primary, out.Secondary = cur.Secondary, ""
	case form.Secondary == nil && out.Primary != "" && out.Primary == cur.Secondary:
		out.Secondary = ""
	case form.Secondary != nil && out.Secondary != "" && out.Secondary == cur.Primary && out.Primary == cur.Primary:
		return cur, fielderr.Errors{fielderr.All: {out.Secondary + " is already set as the primary rack controller"}}
	}
	switch {
	case out.Primary != "" && out.Primary == out.Secondary:
		return cur, fielderr.Errors{fielderr.All: {"The primary and secondary rack must be different"}}
	case out.Secondary != "" && out.Primary == "":
		return cur, fielderr.Errors{fielderr.All: {"A secondary rack controller needs a primary rack controller: set primary_rack as well."}}
	}
	return out, nil
}
