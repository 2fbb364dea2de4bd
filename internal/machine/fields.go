package machine

import (
	"fmt"
	"slices"
	"strings"
)

// Who may change which field of a machine (PUT machines/<id>/). MAAS
// takes machine updates from administrators only; Anvil also lets the
// owner of a machine rename and describe it, since those touch nothing
// but the owner's own view of it. Everything that decides how Anvil
// reaches, powers or places hardware (the BMC, its credentials, the
// drift policy, zone and pool, what the hardware is) stays with
// administrators: an owner who could move a BMC address could send the
// stored password anywhere, or point the machine at another's BMC.
var ownerFields = []string{"hostname", "domain", "description"}

// AdminFields are the update fields only an administrator may give.
var AdminFields = []string{
	"architecture", "zone", "pool", "power_type", "power_parameters", "keep_credentials",
	"drift_policy", "cpu_count", "memory",
}

// UpdateFields are all the fields an update takes.
func UpdateFields() []string { return append(slices.Clone(ownerFields), AdminFields...) }

// MayUpdate says whether a may change the given fields of a machine it
// may edit (CanEdit): admins any, owners only their own fields. Power
// parameters come as power_parameters or power_parameters_<name>.
func MayUpdate(a Actor, fields []string) error {
	if a.Admin || a.System {
		return nil
	}
	var refused []string
	for _, f := range fields {
		if strings.HasPrefix(f, "power_parameters_") {
			f = "power_parameters"
		}
		if slices.Contains(AdminFields, f) && !slices.Contains(refused, f) {
			refused = append(refused, f)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return &ForbiddenError{Action: "update", Reason: fmt.Sprintf("only an administrator may change %s (an owner may change %s)",
		strings.Join(refused, ", "), strings.Join(ownerFields, ", "))}
}

// Credentials are the power parameters that prove Anvil to a BMC. They
// stay with the BMC they were given for: when an update moves the BMC
// (another address or power type) without naming them again, they are
// dropped unless keep is set, so that a changed address never receives
// the old password by default.
var Credentials = []string{"power_user", "power_pass", "power_token", "k_g"}

// bmcAddresses are the parameters that say where a BMC is.
var bmcAddresses = []string{"power_address", "power_on_uri", "power_off_uri", "power_query_uri", "node_id"}

// MovesBMC says whether an update points a machine at another BMC: a new
// power type, or a given address that differs from the stored one.
func MovesBMC(oldType, newType string, old, given map[string]string) bool {
	if oldType != newType {
		return true
	}
	for _, k := range bmcAddresses {
		if v, ok := given[k]; ok && v != old[k] {
			return true
		}
	}
	return false
}

// MergePowerParams applies an update's parameters to the stored ones.
// moved (MovesBMC) says whether the update points the machine at another
// BMC.
func MergePowerParams(old, given map[string]string, moved, keep bool) map[string]string {
	out := make(map[string]string, len(old)+len(given))
	for k, v := range old {
		if moved && !keep && slices.Contains(Credentials, k) {
			continue
		}
		out[k] = v
	}
	for k, v := range given {
		out[k] = v
	}
	return out
}
