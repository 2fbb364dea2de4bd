package rack

// The power work API between a rack and the region (rack/ op=power_*):
// the rack long-polls power_claim with its id and BMC networks and gets
// PowerWork, or 204 when none came within the wait.

// PowerWork is a power request handed to a rack: the command, whether an
// earlier holder may already have sent it (then the rack checks the BMC
// first), and the machine's power parameters, which travel only in this
// answer to an authenticated rack and are never stored or logged by it.
type PowerWork struct {
	ID              string            `json:"id"`
	SystemID        string            `json:"system_id"`
	Action          string            `json:"action"`
	BMC             string            `json:"bmc"`
	Sent            bool              `json:"sent"`
	Attempts        int               `json:"attempts"`
	PowerType       string            `json:"power_type"`
	PowerParameters map[string]string `json:"power_parameters"`
	LeaseSeconds    float64           `json:"lease_seconds"`
}

// Form fields of the power work API.
const (
	PowerRackID      = "rack_id"
	PowerNetworks    = "networks"    // repeated CIDRs
	PowerUnreachable = "unreachable" // repeated BMC hosts the rack's probe failed on
	PowerWait        = "wait"        // seconds a claim may wait for work
	PowerRequestID   = "id"
	PowerState       = "state"
	PowerError       = "error"
	PowerErrorKind   = "error_kind"
	PowerDuration    = "duration" // seconds
	PowerResumed     = "resumed"
)

// MaxClaimWait bounds how long a claim waits for work.
const MaxClaimWait = 60

// DefaultClaimWait is how long a rack's claims wait for work.
const DefaultClaimWait = 20
