// Package agentapi is the wire protocol between the ephemeral environment's
// agent and the region's metadata API: the request and answer types and a
// client. The server side lives in package metadata; the decisions behind
// the answers live in package machine.
//
// The anonymous calls are two: Hello ("do you know me?") and Enlist. Every
// other call carries the machine's own token, MAAS-shaped
// (consumer:key:secret, sent as OAuth PLAINTEXT), which reads and writes
// that machine alone and dies when the machine leaves the phase it was
// issued for.
package agentapi

import (
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/storage"
)

// Paths under the metadata URL the kernel command line gives
// (anvil.url=http://region:5240/MAAS/metadata/).
const (
	HelloPath  = "anvil/v1/hello"
	EnlistPath = "anvil/v1/enlist"
	// MetadataPath is MAAS's metadata version the agent and cloud-init use:
	// GET meta-data/..., GET user-data, POST op=signal.
	MetadataPath = "2012-03-01/"
)

// Kernel command line parameters Anvil renders for the environment.
const (
	ParamURL     = "anvil.url"     // the metadata URL (http://region:5240/MAAS/metadata/)
	ParamPurpose = "anvil.purpose" // enlist, ephemeral or install
	ParamEnrol   = "anvil.enrol"   // one-time enrolment secret, per-MAC configs only
	ParamBoot    = "anvil.boot"    // the rack's boot HTTP server, which also serves images/<sha256>
	// ParamSeen (seen.go) is the rack's signed sighting of the boot.
)

// Actions the region answers with.
const (
	ActionEnlist   = "enlist"   // unknown: enlist
	ActionReboot   = "reboot"   // known, wrong environment: reboot into the right one
	ActionPowerOff = "poweroff" // nothing to do here: power off
	ActionProceed  = "proceed"  // go on with Phase, using Token
)

// Phases the agent runs after proceed.
const (
	PhaseCommissioning = "commissioning"
	PhaseTesting       = "testing"
	PhaseDeploying     = "deploying"
	PhaseDiskErasing   = "disk_erasing"
	PhaseRescue        = "rescue"
	PhaseReleasing     = "releasing"
)

// Identity is everything a machine can say about who it is.
type Identity struct {
	// MACs are every NIC's address, normalised (lower case, colons).
	MACs []string `json:"macs"`
	// BootMAC is the NIC the environment booted from, when known.
	BootMAC string `json:"boot_mac,omitempty"`
	// UUID is the SMBIOS system UUID.
	UUID string `json:"uuid,omitempty"`
	// Arch is MAAS's architecture name, "amd64/generic".
	Arch string `json:"architecture,omitempty"`
	// BMC is the BMC the machine sits behind, read in-band, when it could.
	BMC *machine.BMCInfo `json:"bmc,omitempty"`
	// Firmware is "bios" or "uefi".
	Firmware string `json:"firmware,omitempty"`
	// Seen is the sighting the rack put on the kernel command line
	// (anvil.seen): its signed word that it served this boot.
	Seen string `json:"seen,omitempty"`
}

// HelloRequest asks whether the region knows the machine.
type HelloRequest struct {
	Identity
	// Purpose is what the machine booted (anvil.purpose).
	Purpose string `json:"purpose"`
	// Enrol is the one-time secret from the per-MAC config (anvil.enrol).
	Enrol string `json:"enrol,omitempty"`
}

// HelloResponse is the region's answer: only an action.
type HelloResponse struct {
	Action   string `json:"action"`
	SystemID string `json:"system_id,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	// Phase and Token are set with ActionProceed.
	Phase string `json:"phase,omitempty"`
	Token string `json:"token,omitempty"`
	// Erase is how a disk-erasing phase wipes: quick, full, secure or
	// secure-quick (secure where a disk has it, else quick).
	Erase string `json:"erase,omitempty"`
	// WaitForBMC, with ActionReboot, says the region reboots the machine
	// through its BMC (with a network boot-once): the agent waits for it
	// and reboots by itself only if that never comes.
	WaitForBMC bool `json:"wait_for_bmc,omitempty"`
	// BMCUser, with ActionEnlist, asks the environment to give the BMC it
	// reads in-band a user of this name with a fresh password and to send
	// the credentials with the enlistment; empty leaves the BMC alone.
	BMCUser string `json:"bmc_user,omitempty"`
	// Message says why, for the console.
	Message string `json:"message,omitempty"`
}

// EnlistRequest creates (or finds again) the machine.
type EnlistRequest struct {
	Identity
	Inventory *machine.Inventory `json:"inventory,omitempty"`
	// BMCCredentials are the user the environment created on Identity.BMC
	// when HelloResponse.BMCUser asked for one.
	BMCCredentials *BMCCredentials `json:"bmc_credentials,omitempty"`
}

// BMCCredentials are a BMC user and its password.
type BMCCredentials struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// EnlistResponse says what the enlisted machine does next: power off, or
// proceed straight to commissioning when the site enlists that way.
type EnlistResponse = HelloResponse

// Signal statuses, as MAAS's op=signal takes them.
const (
	StatusOK            = "OK"
	StatusFailed        = "FAILED"
	StatusWorking       = "WORKING"
	StatusCommissioning = "COMMISSIONING"
	StatusTesting       = "TESTING"
	StatusDeploying     = "DEPLOYING"
)

// InventoryFile is the result file a commissioning signal carries the
// structured inventory in; other files are raw results, stored as sent.
const InventoryFile = "anvil-inventory.json"

// Error is the body of an error answer.
type Error struct {
	Error string `json:"error"`
}

// TaskPath answers, with the machine's token, what the current phase is
// to do: the image to write and the first-boot settings for deploying,
// the erase mode for disk erasing.
const TaskPath = "anvil/v1/task"

// OSUpPath is where the deployed OS reports that it is up: cloud-init's
// phone_home posts there at the end of the first boot. phone_home sends no
// headers, so the last path element is the deployment's machine token
// (consumer:key:secret), which dies with the deployment.
const OSUpPath = "anvil/v1/os-up/"

// Task is the work of the current phase.
type Task struct {
	Phase string `json:"phase"`
	// Deploying.
	Image    *Image `json:"image,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	// UserData is the cloud-init user data, as the user gave it.
	UserData []byte   `json:"user_data,omitempty"`
	SSHKeys  []string `json:"ssh_keys,omitempty"`
	// RescueFrom are the addresses rescue mode was asked for from: the
	// rescue SSH server keeps spare connections for them.
	RescueFrom []string `json:"rescue_from,omitempty"`
	// InstanceID is the cloud-init instance ID (the system ID).
	InstanceID string `json:"instance_id,omitempty"`
	// Disk is the kernel name of the disk to write ("sda", "vda"); empty
	// means the agent picks the first non-removable disk large enough.
	Disk string `json:"disk,omitempty"`
	// Ephemeral says the deployment runs from memory: the disks are not
	// touched; the image's root goes to a tmpfs with the seed in it.
	Ephemeral bool `json:"ephemeral,omitempty"`
	// Erase is "quick", "full", "secure" or "secure-quick" for disk erasing.
	Erase string `json:"erase,omitempty"`
	// RebootByBMC says the region reboots the machine through its BMC
	// when the phase signals its end (INSTALLED): the agent waits for it
	// rather than rebooting by itself at once.
	RebootByBMC bool `json:"reboot_by_bmc,omitempty"`
	// NetworkConfig is the deployed OS's cloud-init network-config
	// (version 2), rendered by the region from the machine's interfaces;
	// empty means DHCP on the boot interface.
	NetworkConfig string `json:"network_config,omitempty"`
	// Storage is the layout to build before a root filesystem image is
	// unpacked onto it; nil means one root partition on Disk. Raw images
	// carry their own layout and ignore it.
	Storage *storage.Config `json:"storage,omitempty"`
	// Scripts are the commissioning and testing scripts still to run,
	// in order.
	Scripts []TaskScript `json:"scripts,omitempty"`
}

// Image is a boot resource file to write to disk.
type Image struct {
	URL      string `json:"url"`      // HTTP, Range-capable
	SHA256   string `json:"sha256"`   // of the bytes at URL
	Size     int64  `json:"size"`     // of the bytes at URL
	FileType string `json:"filetype"` // ddraw, ddgz, ddxz, tgz, tbz, txz
	// RawSize is the written size of a compressed raw image, when known.
	RawSize int64 `json:"raw_size,omitempty"`
}

// Signal statuses the deploy phase adds: the image is on disk and the
// next boot is local. The deployed OS's first boot (or the rack serving
// it a local boot) ends the phase.
const StatusInstalled = "INSTALLED"
