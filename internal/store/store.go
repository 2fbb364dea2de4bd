// Package store persists Anvil's state. One interface, two implementations:
// SQLite (embedded, the default) and PostgreSQL (for several regions). Both
// pass the same test suite.
//
// Every method that changes more than one row does so in one transaction, so
// a process killed at any point leaves either the old state or the new one.
//
// Package open opens a store from a database URL; package sqlstore holds the
// one implementation, which packages sqlite and postgres configure; package
// storetest is the suite both pass.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/scripts"
)

// Errors callers test for with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	ErrInUse    = errors.New("in use")
)

// ConflictError names what clashed and, when known, who holds it.
type ConflictError struct {
	What   string // "mac_address 52:54:00:12:34:56", "hostname node1"
	Holder string // system_id or name of the record that holds it
	// HolderName is the holding machine's hostname, when Holder is its
	// system_id: people know machines by it.
	HolderName string
}

func (e *ConflictError) Error() string {
	switch {
	case e.Holder != "" && e.HolderName != "":
		return fmt.Sprintf("%s is already in use by %s (%s)", e.What, e.HolderName, e.Holder)
	case e.Holder != "":
		return fmt.Sprintf("%s is already in use by %s", e.What, e.Holder)
	}
	return e.What + " is already in use"
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// User is an API user.
type User struct {
	ID    int64
	Name  string
	Email string
	Admin bool
}

// Token is an API key: consumer key, token key and token secret, given to
// clients as "consumer:token:secret" (MAAS's format).
type Token struct {
	ConsumerKey string
	TokenKey    string
	Secret      string
	Username    string
	Created     time.Time
	// Name is MAAS's consumer name for the key.
	Name string
}

// DefaultTokenName is MAAS's name for a token created without one.
const DefaultTokenName = "MAAS consumer"

// APIKey renders the token in MAAS's format.
func (t Token) APIKey() string { return t.ConsumerKey + ":" + t.TokenKey + ":" + t.Secret }

// Zone and Pool are named groups of machines. "default" always exists.
type Zone struct {
	ID          int64
	Name        string
	Description string
}

type Pool struct {
	ID          int64
	Name        string
	Description string
}

// Tag is a label on machines.
type Tag struct {
	ID         int64
	Name       string
	Comment    string
	Definition string
	KernelOpts string
}

// Script is a stored script: its metadata and its revisions, newest
// first (Versions[0] is the current text).
type Script struct {
	ID       int64
	Default  bool
	Meta     scripts.Script
	Versions []ScriptVersion
	Created  time.Time
	Updated  time.Time
}

// ScriptSet is one run of scripts of one type on a machine.
type ScriptSet struct {
	ID         int64
	SystemID   string
	ResultType scripts.Type
	Created    time.Time
	Results    []ScriptResult // by ID
}

// ScriptResult is what one script did on one instance (a disk, a NIC, or
// the machine).
type ScriptResult struct {
	ID              int64
	SetID           int64
	ScriptID        int64 // 0 once the script is gone
	ScriptVersionID int64
	Name            string
	HardwareType    scripts.HardwareType
	Instance        string
	Parameters      map[string]any
	Status          scripts.Status
	ExitStatus      *int
	Output          []byte // stdout and stderr as they came
	Stdout, Stderr  []byte
	Result          []byte // the script's result YAML
	Started, Ended  time.Time
	Suppressed      bool
}

// ScriptVersion is one revision of a script's text.
type ScriptVersion struct {
	ID      int64
	Data    []byte
	Comment string
	Created time.Time
}

// Subnet is a network Anvil may serve DHCP on.
type Subnet struct {
	ID           int64
	Name         string
	CIDR         string // canonical, e.g. 192.0.2.0/24
	Gateway      string
	DNSServers   []string
	Domain       string
	DHCP         bool // Anvil hands out addresses here
	LeaseSeconds int

	// The network model's fields, as MAAS names them.
	VLANID                    int64
	Managed                   bool
	AllowDNS                  bool
	AllowProxy                bool
	RDNSMode                  int
	ActiveDiscovery           bool
	DisabledBootArchitectures []string
	Description               string
}

// IPRange is a range of a subnet: "dynamic" for DHCP to hand out,
// "reserved" never to hand out.
type IPRange struct {
	ID       int64
	SubnetID int64
	Type     string
	Start    string
	End      string
	Comment  string
	Owner    string // who reserved it
}

// RegionSeen is a region process by the URL it answers at.
type RegionSeen struct {
	URL  string
	Seen time.Time
}

// Rack is a rack process that follows a region's boot stream: what it
// said it is, where it connected from, and when it last was connected.
type Rack struct {
	SystemID string
	Hostname string
	Address  string
	Version  string
	Seen     time.Time
	// DNS are the addresses the rack answers DNS at, as it reports them.
	DNS []string
	// Enrolled says the rack enrolled with a secret and calls with its
	// own credential (else with a user's API key).
	Enrolled bool
	// Report is the last status the rack reported (JSON: interfaces,
	// BMC networks, services), at Reported.
	Report   string
	Reported time.Time
	// BMCNetworks are the networks (CIDRs) an administrator granted the
	// rack: it may power the BMCs in them. Subnets are the subnets
	// (CIDRs) an administrator confirmed it serves.
	BMCNetworks []string
	Subnets     []string
	// Served are the networks the rack serves, as the store reads them:
	// its confirmed Subnets and the subnets of the VLANs it is primary or
	// secondary rack of. Only addresses in them count as its own (see
	// Trusts).
	Served []netip.Prefix
}

// RackGrant is what an administrator trusts a rack with; a nil field is
// left as it is.
type RackGrant struct {
	BMCNetworks []string
	Subnets     []string
}

// RackAlive is how long after it was last seen a rack counts as alive.
const RackAlive = 2 * time.Minute

// RackCredential is an enrolled rack's own API key. Secret is only
// known when it is issued; the store keeps its SHA-256 (SecretHash).
type RackCredential struct {
	ConsumerKey string
	TokenKey    string
	Secret      string
	SecretHash  string
	RackID      string
	Hostname    string
}

// APIKey renders the credential in MAAS's key format.
func (c RackCredential) APIKey() string { return c.ConsumerKey + ":" + c.TokenKey + ":" + c.Secret }

// HashSecret is the SHA-256 of a rack's secret, in hex: what the region
// keeps, compares, and checks the rack's signed sightings of boots with
// (the rack signs them with the hash, so the region needs no secret).
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// RackLease is a DHCP lease a rack holds on a subnet it shares with a
// partner rack, as the rack reported it: MAC (lower case), address,
// subnet (CIDR) and when it runs out.
type RackLease struct {
	RackID  string
	MAC     string
	IP      string
	Subnet  string
	Expires time.Time
}

// Domain is a DNS domain. TTL nil inherits default_dns_ttl; one domain
// is the default (the "maas" domain, id 0, until another is made so).
type Domain struct {
	ID            int64
	Name          string
	Authoritative bool
	TTL           *int
	Default       bool
}

// DNSResource is a name in a domain ("@" for the domain itself) with
// addresses of its own; its records are DNSData.
type DNSResource struct {
	ID         int64
	Name       string
	DomainID   int64
	AddressTTL *int
	IPs        []string
	// Owner is the user whose address reservation made the name; ""
	// is administrators'. Updates keep it.
	Owner string
}

// DNSData is one record of a DNS resource: MAAS's rrtype and rrdata.
type DNSData struct {
	ID         int64
	ResourceID int64
	Type       string
	Data       string
	TTL        *int
}

// Discovery is a sighting of a MAC that asked for an address or a boot:
// the address it had and when. Of a MAC no machine has, it is a
// discovery; of a machine's, the machine's last known address.
type Discovery struct {
	MAC       string
	IP        string
	FirstSeen time.Time
	LastSeen  time.Time
	Seen      int64
	LastWhat  string
}

// HeldBoot is a boot that said it is a machine added by its BMC alone but
// was not corroborated: what it said, for an administrator to accept.
type HeldBoot struct {
	SystemID string
	MACs     []string
	BootMAC  string
	UUID     string
	Source   string // the address it spoke from
	Reason   string
	Created  time.Time
}

// MachineFilter selects machines; empty fields do not filter. Values within
// one field are alternatives (OR); fields combine with AND.
type MachineFilter struct {
	SystemIDs []string
	Hostnames []string
	MACs      []string // normalised
	UUIDs     []string // hardware (SMBIOS) UUIDs, lower case
	// BMCHost selects machines whose BMC identity names this host (may
	// over-match: callers compare the identity themselves).
	BMCHost   string
	Statuses  []machine.Status
	Zones     []string
	Pools     []string
	Owners    []string
	Arch      string
	Tags      []string // must carry every one
	NotTags   []string // must carry none
	MinCPU    int
	MinMemory int64 // MiB
	// VisibleTo limits the result to what a non-admin user may see: free
	// machines and machines it owns. Empty means no limit (admin).
	VisibleTo string
	// WithPowerParams loads and decrypts power parameters; lists that do
	// not show them skip the work.
	WithPowerParams bool
	// Limit caps the number of machines; 0 means no cap.
	Limit int
}

// MachineVersion identifies a machine's current state: any stored change
// to the machine (its tags included) increases Version. Zone and pool are
// given by name because renaming one changes how the machine reads without
// touching its row.
type MachineVersion struct {
	SystemID string
	Version  int64
	Zone     string
	Pool     string
}

// Retention is how long events and discoveries are kept. A zero age or
// count keeps them without that limit.
type Retention struct {
	EventAge       time.Duration
	DiscoveryAge   time.Duration
	MaxDiscoveries int
	Batch          int // events deleted per call at most
}

// Pruned counts what one Prune deleted.
type Pruned struct {
	Events, Discoveries int64
}

// EventFilter selects events, newest first unless Ascending.
type EventFilter struct {
	Hostnames []string
	SystemIDs []string
	Zones     []string
	MinLevel  machine.Level // events at this level or more severe
	// SkipTypePrefix leaves out events whose type begins with it.
	SkipTypePrefix string
	Owner          string // events of machines owned by this user
	BeforeID       int64  // events with ID < BeforeID
	AfterID        int64  // events with ID > AfterID
	Limit          int    // 0 means 100
	Ascending      bool
}

// Power request states.
const (
	PowerQueued  = "queued"
	PowerRunning = "running"
	PowerDone    = "done"
	PowerFailed  = "failed"
)

// PowerRequest is one power command in a machine's queue. It carries no
// power parameters: the worker reads them from the machine when it runs the
// command, so secrets never sit in the queue.
type PowerRequest struct {
	ID           string
	SystemID     string
	BMCKey       string // commands with the same key never overlap
	Action       string
	State        string
	RequestedBy  string
	Reason       string
	Created      time.Time
	Started      time.Time
	Finished     time.Time
	Attempts     int
	LeaseOwner   string
	LeaseExpires time.Time
	ResultState  string // power state the BMC reported afterwards
	Error        string
	ErrorKind    string
	// Sent is when a worker was about to send the command to the BMC
	// (zero: never). A request claimed again after a lost lease with Sent
	// set may already have acted, so it is checked before it is re-sent.
	Sent time.Time
}

// RackPower is a rack that runs power commands: the id it gives itself,
// the BMC networks it declared (CIDRs) and when it last asked for work.
type RackPower struct {
	ID       string
	Hostname string
	// SystemID is the enrolled rack the claims are made for, if any: it
	// is recorded as seen with them.
	SystemID string
	Networks []string
	Seen     time.Time
}

// SSHKey is a user's public key, put on the machines the user deploys.
type SSHKey struct {
	ID       int64
	Username string
	Key      string
	Created  time.Time
	// KeySource is where an imported key came from, MAAS's
	// "protocol:id" ("gh:alice"); empty for a key added by hand.
	KeySource string
}

// Session is a web UI login. Its ID is given to the browser once, as a
// cookie, and stored only as a hash; CSRF is the token every state-changing
// request made with the cookie must echo in a header or form field.
type Session struct {
	ID       string // only set by CreateSession
	Username string
	CSRF     string
	Created  time.Time
	Expires  time.Time
}

// Result is a file the ephemeral environment uploaded for a machine.
type Result struct {
	Name    string
	Data    []byte
	Created time.Time
}

// UpdateFunc changes a machine in place and returns the events to record
// with the change. Returning an error aborts the transaction.
type UpdateFunc func(m *machine.Machine) ([]machine.Event, error)

// PowerUpdateFunc is an UpdateFunc that may also return the power request
// the change implies (nil for none); its SystemID is the machine's.
type PowerUpdateFunc func(m *machine.Machine) ([]machine.Event, *PowerRequest, error)

// Store is everything Anvil keeps.
type Store interface {
	// Machines. CreateMachine assigns SystemID when empty, and Created,
	// Updated and Version; it stores interfaces and events in the same
	// transaction and fails with a *ConflictError for a MAC, hostname or
	// system_id already taken. Zone and Pool must name existing ones
	// (empty means "default").
	CreateMachine(ctx context.Context, m *machine.Machine, events []machine.Event) error
	GetMachine(ctx context.Context, systemID string) (machine.Machine, error)
	ListMachines(ctx context.Context, f MachineFilter) ([]machine.Machine, error)
	// ListMachineVersions is ListMachines reduced to what identifies each
	// machine's state, for readers that cache what they render.
	ListMachineVersions(ctx context.Context, f MachineFilter) ([]MachineVersion, error)
	// UpdateMachine loads the machine (locking it against concurrent
	// updates), applies fn, and writes every field, its interfaces and the
	// returned events in one transaction. Tags are not written: use
	// TagMachines. Version is incremented.
	UpdateMachine(ctx context.Context, systemID string, fn UpdateFunc) (machine.Machine, error)
	DeleteMachine(ctx context.Context, systemID string, events []machine.Event) error
	// ExpiredMachines returns the system IDs whose status_expires is at or
	// before now.
	ExpiredMachines(ctx context.Context, now time.Time) ([]string, error)
	CountMachines(ctx context.Context) (int, error)
	// Devices share the machines' table but are never machines.
	DeviceStore

	// Users and API tokens.
	EnsureUser(ctx context.Context, name string, admin bool) (User, error)
	// CreateUser adds a new user with an email and a password hash ("" for
	// none) in one statement; a name already taken is a *ConflictError.
	CreateUser(ctx context.Context, u User, passwordHash string) (User, error)
	GetUser(ctx context.Context, name string) (User, error)
	ListUsers(ctx context.Context) ([]User, error)
	// DeleteUser removes a user and its tokens, sessions and SSH keys;
	// one who owns machines, or the last administrator, is ErrInUse.
	DeleteUser(ctx context.Context, name string) error
	CreateToken(ctx context.Context, username string) (Token, error)
	// CreateNamedToken is CreateToken under a name (MAAS's consumer name).
	// ListTokens lists a user's tokens, oldest first, secrets unsealed.
	// DeleteToken and RenameToken act on one of the user's own tokens by
	// its token key: another user's, or none, is ErrNotFound. A deleted
	// token authenticates nothing from then on.
	CreateNamedToken(ctx context.Context, username, name string) (Token, error)
	ListTokens(ctx context.Context, username string) ([]Token, error)
	DeleteToken(ctx context.Context, username, tokenKey string) error
	RenameToken(ctx context.Context, username, tokenKey, name string) error
	// LookupToken finds a token by its consumer and token keys.
	LookupToken(ctx context.Context, consumerKey, tokenKey string) (Token, User, error)

	// SSH keys of users: the same key twice for one user is a
	// *ConflictError; deleting another user's key is ErrNotFound.
	// SetPassword stores a user's password hash (see package password); an
	// empty hash disables password login.
	SetPassword(ctx context.Context, username, hash string) error
	// PasswordHash returns the user and its stored hash ("" when none).
	PasswordHash(ctx context.Context, username string) (User, string, error)
	// CreateSession starts a web UI session lasting ttl.
	CreateSession(ctx context.Context, username string, ttl time.Duration) (Session, error)
	// LookupSession returns a live session and its user; an unknown or
	// expired one wraps ErrNotFound.
	LookupSession(ctx context.Context, id string) (Session, User, error)
	// DeleteSession ends a session (logout); deleting an unknown one is not
	// an error. Expired sessions are removed as a side effect.
	DeleteSession(ctx context.Context, id string) error
	AddSSHKey(ctx context.Context, username, key string) (SSHKey, error)
	ListSSHKeys(ctx context.Context, username string) ([]SSHKey, error)
	// ImportSSHKeys adds, in one transaction, those of keys the user does
	// not have yet, under keysource, and returns the user's keys from
	// keysource (those added and those it had).
	ImportSSHKeys(ctx context.Context, username, keysource string, keys []string) ([]SSHKey, error)
	DeleteSSHKey(ctx context.Context, username string, id int64) error

	// Machine tokens: the metadata credentials of one machine, valid only
	// while it is in the status they were issued for. Creating one revokes
	// the machine's others; LookupMachineToken checks the secret and
	// answers ErrNotFound for anything wrong. Results are the files the
	// environment uploads, the latest per name; both go with the machine.
	CreateMachineToken(ctx context.Context, systemID string, st machine.Status) (Token, error)
	LookupMachineToken(ctx context.Context, consumerKey, tokenKey, secret string) (string, machine.Status, error)
	// MachineToken is the machine's current token without its secret,
	// which is kept only as a hash, and the status it was issued for;
	// ErrNotFound when the machine has none.
	MachineToken(ctx context.Context, systemID string) (Token, machine.Status, error)
	DeleteMachineTokens(ctx context.Context, systemID string) error
	PutResults(ctx context.Context, systemID string, files map[string][]byte) error
	// UpdateMachineWithResults is UpdateMachine that also stores result
	// files (as PutResults) in the same transaction: results and the step
	// they led to are written together or not at all.
	UpdateMachineWithResults(ctx context.Context, systemID string, files map[string][]byte, fn UpdateFunc) (machine.Machine, error)
	// UpdateMachinePower is UpdateMachineWithResults (files may be nil)
	// whose fn may also return a power request, enqueued as EnqueuePower
	// does in the same transaction: a status change and the power command
	// it implies are stored together or not at all, so a crash between
	// them cannot leave a machine in a phase with nothing queued. It
	// returns the request stored or coalesced with (nil if none) and
	// whether it was coalesced.
	UpdateMachinePower(ctx context.Context, systemID string, files map[string][]byte, fn PowerUpdateFunc) (machine.Machine, *PowerRequest, bool, error)
	ListResults(ctx context.Context, systemID string) ([]Result, error)

	// Zones and pools: names are unique; "default" cannot be deleted; a zone
	// or pool that still holds machines cannot be deleted (ErrInUse).
	ListZones(ctx context.Context) ([]Zone, error)
	GetZone(ctx context.Context, name string) (Zone, error)
	CreateZone(ctx context.Context, z Zone) (Zone, error)
	UpdateZone(ctx context.Context, name string, z Zone) (Zone, error)
	DeleteZone(ctx context.Context, name string) error
	ListPools(ctx context.Context) ([]Pool, error)
	GetPool(ctx context.Context, name string) (Pool, error)
	CreatePool(ctx context.Context, p Pool) (Pool, error)
	UpdatePool(ctx context.Context, name string, p Pool) (Pool, error)
	DeletePool(ctx context.Context, name string) error

	// Subnets and ranges. Names and CIDRs are unique (ConflictError);
	// deleting a subnet deletes its ranges.
	ListSubnets(ctx context.Context) ([]Subnet, error)
	GetSubnet(ctx context.Context, id int64) (Subnet, error)
	CreateSubnet(ctx context.Context, s Subnet) (Subnet, error)
	UpdateSubnet(ctx context.Context, s Subnet) (Subnet, error)
	DeleteSubnet(ctx context.Context, id int64) error
	ListIPRanges(ctx context.Context) ([]IPRange, error)
	CreateIPRange(ctx context.Context, r IPRange) (IPRange, error)
	DeleteIPRange(ctx context.Context, id int64) error
	NetworkStore
	InterfaceStore
	ReservedIPStore

	// Discoveries: NoteDiscovery records a sighting of a MAC (the address
	// it was seen with, and when). ListDiscoveries lists those of MACs no
	// machine has; MachineSightings those of MACs machines have (of macs,
	// when not nil), which is where a machine's addresses are read.
	NoteDiscovery(ctx context.Context, d Discovery) error
	ListDiscoveries(ctx context.Context) ([]Discovery, error)
	MachineSightings(ctx context.Context, macs []string) ([]Discovery, error)
	DeleteDiscovery(ctx context.Context, mac string) error
	// Prune deletes old events and discoveries (see Retention), and
	// sightings spent more than a day ago.
	Prune(ctx context.Context, r Retention) (Pruned, error)

	// Boot corroboration. SpendSighting records a rack's sighting of a
	// boot as answered, for systemID; false when it already was.
	// HoldBoot keeps the boot last held for a machine added by its BMC
	// alone (one a machine, the newest); HeldBoot finds it
	// (ErrNotFound); DeleteHeldBoot drops it. HeldBootMachines lists the
	// system IDs with a held boot, oldest hold first.
	SpendSighting(ctx context.Context, id, systemID string) (bool, error)
	HoldBoot(ctx context.Context, h HeldBoot) error
	HeldBoot(ctx context.Context, systemID string) (HeldBoot, error)
	HeldBootMachines(ctx context.Context) ([]string, error)
	DeleteHeldBoot(ctx context.Context, systemID string) error

	// Pool drift policies: the default power drift policy of machines in
	// a pool that have none of their own. Setting one bumps the version of
	// the pool's machines, whose effective policy changes.
	PoolDriftPolicies(ctx context.Context) (map[string]string, error)

	// GetConfig and SetConfig keep run-time settings (MAAS's get_config and
	// set_config); ok is false for a setting never set.
	GetConfig(ctx context.Context, name string) (value string, ok bool, err error)
	// ListConfig returns every run-time setting that was set, by name.
	ListConfig(ctx context.Context) (map[string]string, error)
	// TouchRegion records that the region process answering at url is
	// alive; Regions lists those seen since a time, newest first.
	TouchRegion(ctx context.Context, url string) error
	Regions(ctx context.Context, since time.Time) ([]string, error)
	// RegionsSeen lists every region recorded, with when it was last
	// seen, most recently seen first.
	RegionsSeen(ctx context.Context) ([]RegionSeen, error)
	// TouchRack records a rack following the boot stream, by its
	// SystemID, as seen at r.Seen (zero: now); ListRacks lists them by
	// hostname.
	TouchRack(ctx context.Context, r Rack) error
	ListRacks(ctx context.Context) ([]Rack, error)
	// RackAddresses are every rack's own addresses (Rack.Addresses),
	// which no machine, device or reservation may take.
	RackAddresses(ctx context.Context) (map[netip.Addr]bool, error)
	// Racks enrol with a one-time secret an administrator issues
	// (CreateRackSecret returns it; only its hash is kept). EnrolRack
	// spends the secret and records the rack with a new credential, in
	// one transaction; an unknown, spent or lapsed secret is ErrNotFound.
	// A rack enrolling again under the hostname of an enrolled rack not
	// seen for RackAlive takes its place: it keeps its system id and the
	// old credentials stop working (a reinstalled rack).
	// bmcNetworks are the networks the rack enrolling with the secret is
	// granted (RackGrant.BMCNetworks); a rack taking an earlier rack's
	// place keeps that rack's grant unless the secret carries one.
	CreateRackSecret(ctx context.Context, createdBy string, expires time.Time, bmcNetworks ...string) (string, error)
	EnrolRack(ctx context.Context, secret string, r Rack) (RackCredential, error)
	// RackCredentialByToken finds an enrolled rack's credential (with
	// its secret's hash) by its token key.
	RackCredentialByToken(ctx context.Context, tokenKey string) (RackCredential, error)
	// ReportRack records a rack's status report (r.Report) as seen now.
	ReportRack(ctx context.Context, r Rack) error
	// GrantRack sets what an administrator trusts an enrolled rack with
	// (ErrNotFound for an unknown or unenrolled rack).
	GrantRack(ctx context.Context, systemID string, g RackGrant) error
	// DeleteRack forgets a rack and revokes its credentials.
	DeleteRack(ctx context.Context, systemID string) error
	// SetRackLeases makes ls the DHCP leases rackID holds, replacing what
	// it reported before, and forgets every rack's leases that ran out
	// before now. RackLeases lists the racks' leases running past at, by
	// subnet and address.
	SetRackLeases(ctx context.Context, rackID string, ls []RackLease, now time.Time) error
	RackLeases(ctx context.Context, at time.Time) ([]RackLease, error)
	SetConfig(ctx context.Context, name, value string) error
	SetPoolDriftPolicy(ctx context.Context, pool, policy string) error

	// DNS. A domain's or resource's name is unique (a *ConflictError); a
	// domain that is the default or still holds resources cannot be
	// deleted (ErrInUse); deleting a resource deletes its records.
	// SetDefaultDomain makes one domain the default in one transaction.
	// DNSSerial returns the zones' serial for content named by hash: the
	// stored one if the hash is the one stored, else the next one, stored
	// with the hash, so every region on one database numbers alike.
	ListDomains(ctx context.Context) ([]Domain, error)
	CreateDomain(ctx context.Context, d Domain) (Domain, error)
	UpdateDomain(ctx context.Context, d Domain) (Domain, error)
	DeleteDomain(ctx context.Context, id int64) error
	SetDefaultDomain(ctx context.Context, id int64) error
	ListDNSResources(ctx context.Context) ([]DNSResource, error)
	CreateDNSResource(ctx context.Context, r DNSResource) (DNSResource, error)
	// UpdateDNSResource and UpdateDNSData change a name or a record;
	// check (nil for none) first sees what the name holds then, under the
	// same lock AddDNSData takes.
	UpdateDNSResource(ctx context.Context, r DNSResource, check func(DNSResource, []DNSData) error) (DNSResource, error)
	DeleteDNSResource(ctx context.Context, id int64) error
	ListDNSData(ctx context.Context) ([]DNSData, error)
	CreateDNSData(ctx context.Context, d DNSData) (DNSData, error)
	// AddDNSData adds d to the name r (by domain and name; made with r's
	// other fields when it has none yet) in one transaction that holds the
	// name: check sees what the name holds then, and an error from it
	// stores nothing. Two conflicting adds at once cannot both pass.
	AddDNSData(ctx context.Context, r DNSResource, d DNSData, check func(DNSResource, []DNSData) error) (DNSResource, DNSData, error)
	UpdateDNSData(ctx context.Context, d DNSData, check func(DNSResource, []DNSData) error) (DNSData, error)
	DeleteDNSData(ctx context.Context, id int64) error
	// NameAddress puts ip on the name r (by domain and name; made with
	// r's owner when it has none yet) in one transaction that holds the
	// name: check sees what the name holds then, and an error from it
	// stores nothing. UnnameAddress takes ip off every name whose owner
	// owned accepts, in one transaction, deleting a name left with neither
	// addresses nor records.
	NameAddress(ctx context.Context, r DNSResource, ip string, check func(DNSResource, []DNSData) error) (DNSResource, error)
	UnnameAddress(ctx context.Context, ip string, owned func(owner string) bool) error
	DNSSerial(ctx context.Context, hash string) (uint32, error)

	// Tags. TagMachines adds and removes machines in one transaction; an
	// unknown system ID fails the whole call with ErrNotFound.
	ListTags(ctx context.Context) ([]Tag, error)
	GetTag(ctx context.Context, name string) (Tag, error)
	CreateTag(ctx context.Context, t Tag) (Tag, error)
	UpdateTag(ctx context.Context, name string, t Tag) (Tag, error)
	DeleteTag(ctx context.Context, name string) error
	TagMachines(ctx context.Context, tag string, add, remove []string) error

	// Scripts (commissioning and testing) and their revisions. Names are
	// unique (*ConflictError). GetScript finds one by name, or by ID when
	// ref is a number. UpdateScript writes the metadata and, when text is
	// not nil, adds it as the newest revision. RevertScript makes the
	// revision keep the newest, deleting those after it. EnsureScript
	// stores a shipped script, or updates it when its text changed.
	ListScripts(ctx context.Context) ([]Script, error)
	GetScript(ctx context.Context, ref string) (Script, error)
	CreateScript(ctx context.Context, s Script, text []byte, comment string) (Script, error)
	UpdateScript(ctx context.Context, id int64, meta scripts.Script, text []byte, comment string) (Script, error)
	RevertScript(ctx context.Context, id, keep int64) (Script, error)
	DeleteScript(ctx context.Context, id int64) error
	EnsureScript(ctx context.Context, meta scripts.Script, text []byte) error

	// Script sets: the scripts a machine is to run (or ran) in one phase,
	// with a result each. CreateScriptSet stores a set with its results
	// (ErrNotFound for an unknown machine); ListScriptSets returns a
	// machine's sets, newest first; UpdateScriptResult applies fn to one
	// result of the machine's in one transaction (ErrNotFound when the
	// result is not the machine's).
	CreateScriptSet(ctx context.Context, set ScriptSet) (ScriptSet, error)
	ListScriptSets(ctx context.Context, systemID string) ([]ScriptSet, error)
	UpdateScriptResult(ctx context.Context, systemID string, id int64, fn func(*ScriptResult) error) (ScriptResult, error)

	// Events. AppendEvents assigns IDs (increasing) and stores them.
	AppendEvents(ctx context.Context, events ...machine.Event) error
	QueryEvents(ctx context.Context, f EventFilter) ([]machine.Event, error)
	// LastEventID is the highest event ID stored, 0 when none.
	LastEventID(ctx context.Context) (int64, error)

	// The serialised power queue. EnqueuePower stores r as queued unless
	// the machine's newest queued or running request is equal (same
	// action), in which case it returns that one and true. ClaimPower marks running,
	// under a lease for owner until leaseUntil, the oldest queued request
	// whose machine and BMC have nothing running and which no earlier
	// request of its machine precedes; ErrNotFound when there is none.
	// Claims are serialised across processes, so two regions can never
	// start commands on one machine or one BMC at once.
	EnqueuePower(ctx context.Context, r PowerRequest) (PowerRequest, bool, error)
	ClaimPower(ctx context.Context, owner string, now, leaseUntil time.Time) (PowerRequest, error)
	// ExtendPowerLease moves a running request's lease on; it fails with
	// ErrNotFound if the lease was lost (expired and taken back).
	ExtendPowerLease(ctx context.Context, id, owner string, until time.Time) error
	// FinishPower records how a running request held by r.LeaseOwner
	// ended; ErrNotFound if it is no longer running under that lease.
	FinishPower(ctx context.Context, r PowerRequest) error
	// FinishPowerWith is FinishPower with fn's change to the request's
	// machine, and the request fn returns (enqueued as EnqueuePower does),
	// in the same transaction: a command's end and the lifecycle step it
	// implies (Releasing → Ready after the power off) are stored together
	// or not at all. fn may be nil; a machine that is gone leaves only the
	// request to finish, and the zero machine is returned.
	FinishPowerWith(ctx context.Context, r PowerRequest, fn PowerUpdateFunc) (machine.Machine, *PowerRequest, error)
	// MarkPowerSent records, before a worker sends r's command, that it
	// may reach the BMC (PowerRequest.Sent); ErrNotFound if the lease is
	// no longer owner's.
	MarkPowerSent(ctx context.Context, id, owner string, at time.Time) error
	// ExpirePowerLeases puts back in the queue running requests whose
	// lease ran out before now (their region died) and returns, still
	// running, those that have had maxAttempts: the caller fails each
	// with FinishPowerWith, so that the machine's step goes with it.
	ExpirePowerLeases(ctx context.Context, now time.Time, maxAttempts int) ([]PowerRequest, error)
	GetPowerRequest(ctx context.Context, id string) (PowerRequest, error)
	// PowerQueue lists a machine's running and queued requests in order.
	PowerQueue(ctx context.Context, systemID string) ([]PowerRequest, error)
	// PrunePower deletes finished requests older than before.
	PrunePower(ctx context.Context, before time.Time) (int, error)
	// ClaimPowerWhere is ClaimPower among the requests ok accepts (nil:
	// all). ReleasePower puts a claimed request never marked sent back
	// in the queue, its attempt uncounted; ErrNotFound if it is not such
	// a request of owner's. NoteRackPower records a rack asking for power
	// work now; RackPowers lists those seen since since.
	ClaimPowerWhere(ctx context.Context, owner string, now, leaseUntil time.Time, ok func(PowerRequest) bool) (PowerRequest, error)
	ReleasePower(ctx context.Context, id, owner string) error
	NoteRackPower(ctx context.Context, r RackPower) error
	RackPowers(ctx context.Context, since time.Time) ([]RackPower, error)

	// AcquireLease takes or renews the named lease for holder until
	// `until`, if it is free, expired at now, or already holder's; it
	// reports whether holder has it. One region runs each fleet-wide loop.
	AcquireLease(ctx context.Context, name, holder string, now, until time.Time) (bool, error)

	// Boot resources (images). CreateBootResource finds the resource by
	// name and architecture, or creates it, sets its title and base image,
	// and adds f to it as a new set; it returns the resource with its
	// files. A file whose SHA256 another file already names with a
	// different size is a *ConflictError. When f is complete, the
	// resource's older files are removed as CompleteBootResourceFile does.
	CreateBootResource(ctx context.Context, r BootResource, f BootResourceFile) (BootResource, error)
	// GetBootResource returns one resource with its files (ErrNotFound).
	GetBootResource(ctx context.Context, id int64) (BootResource, error)
	// ListBootResources returns every resource with its files, by name
	// and architecture.
	ListBootResources(ctx context.Context) ([]BootResource, error)
	// CompleteBootResourceFile marks a file complete and removes the older
	// files of its resource (a new upload replaces the old one only once
	// it is complete); it returns the files removed.
	CompleteBootResourceFile(ctx context.Context, fileID int64) ([]BootResourceFile, error)
	// DeleteBootResource removes a resource and its files and returns the
	// files removed (ErrNotFound for an unknown id).
	DeleteBootResource(ctx context.Context, id int64) ([]BootResourceFile, error)
	// MarkBootResourceDeployed sets the resource's LastDeployed to at
	// (ErrNotFound).
	MarkBootResourceDeployed(ctx context.Context, id int64, at time.Time) error
	// BootResourceFilesBySHA256 lists the files, of any resource, with
	// these bytes: whether an image is still wanted, and by whom.
	BootResourceFilesBySHA256(ctx context.Context, sha256 string) ([]BootResourceFile, error)
	// SetBootResourceDeployedAt changes what ends a deployment of the
	// resource (ErrNotFound).
	SetBootResourceDeployedAt(ctx context.Context, id int64, d machine.DeployedAt) (BootResource, error)

	Close() error
}

// BootResource is an image machines can be deployed with: MAAS's uploaded
// boot resource. Name and Architecture identify it ("noble" for a custom
// image, "ubuntu/noble"; "amd64/generic"); uploading again under the same
// pair adds a new set (a version) to it.
type BootResource struct {
	ID           int64
	Name         string
	Architecture string
	Title        string
	BaseImage    string // "ubuntu/noble": what a custom image is built on
	// DeployedAt is what ends a deployment of this image; "" is
	// machine.DeployedAtOS. An upload that gives none keeps the stored one.
	DeployedAt machine.DeployedAt
	Created    time.Time
	Updated    time.Time
	// LastDeployed is when a deploy with it was last accepted (zero:
	// never).
	LastDeployed time.Time
	// Files are the resource's sets, newest first; an uploaded set holds
	// one file.
	Files []BootResourceFile
}

// BootResourceFile is one file of a boot resource set. Its bytes live
// outside the database, named by SHA256; Complete says they are there and
// were verified against SHA256 and Size.
type BootResourceFile struct {
	ID         int64
	ResourceID int64
	Version    string // the set's version, "20250314" or "20250314.1"
	Label      string // "uploaded"
	Filename   string // "root.tgz", "ddraw", ...
	Filetype   string // MAAS's upload names: tgz, ddraw, ddgz, ...
	SHA256     string // lower-case hex
	Size       int64
	Complete   bool
	Created    time.Time
}
