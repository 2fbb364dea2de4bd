package api

import (
	"math"
	"sort"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/region"
)

// machineJSON is a machine as MAAS renders it: every field of MAAS's
// DISPLAYED_MACHINE_FIELDS with MAAS's JSON type, and MAAS's value for a
// machine without the feature (null, [], {}, 0, "") where Anvil has no
// model for it yet. Clients parse these strictly (gomaasapi checks types,
// gomaasclient decodes into fixed structs), so a field is never left out.
// Anvil's own fields follow MAAS's.
type machineJSON struct {
	ResourceURI         string            `json:"resource_uri"`
	SystemID            string            `json:"system_id"`
	Hostname            string            `json:"hostname"`
	Description         string            `json:"description"`
	HardwareUUID        *string           `json:"hardware_uuid"`
	Domain              domainJSON        `json:"domain"`
	FQDN                string            `json:"fqdn"`
	Owner               *string           `json:"owner"`
	OwnerData           map[string]string `json:"owner_data"`
	Locked              bool              `json:"locked"`
	CacheSets           []cacheSetJSON    `json:"cache_sets"`
	BCaches             []bcacheJSON      `json:"bcaches"`
	BIOSBootMethod      *string           `json:"bios_boot_method"`
	BootInterface       *ifaceJSON        `json:"boot_interface"`
	Architecture        string            `json:"architecture"`
	MinHWEKernel        string            `json:"min_hwe_kernel"`
	HWEKernel           *string           `json:"hwe_kernel"`
	CPUCount            int               `json:"cpu_count"`
	CPUSpeed            int               `json:"cpu_speed"` // MHz
	Memory              int64             `json:"memory"`    // MiB
	SwapSize            *int64            `json:"swap_size"`
	Storage             float64           `json:"storage"` // MB
	Status              int               `json:"status"`
	OSystem             string            `json:"osystem"`
	DistroSeries        string            `json:"distro_series"`
	EphemeralDeploy     bool              `json:"ephemeral_deploy"`
	ErrorDescription    string            `json:"error_description"`
	Netboot             bool              `json:"netboot"`
	PowerType           string            `json:"power_type"`
	PowerState          string            `json:"power_state"`
	TagNames            []string          `json:"tag_names"`
	AddressTTL          *int              `json:"address_ttl"`
	IPAddresses         []string          `json:"ip_addresses"`
	Interfaces          []ifaceJSON       `json:"interface_set"`
	Zone                zoneJSON          `json:"zone"`
	Pool                poolJSON          `json:"pool"`
	DisableIPv4         bool              `json:"disable_ipv4"`
	ConstraintsMap      any               `json:"constraints_by_type,omitempty"` // allocation answers only
	BootDisk            *blockJSON        `json:"boot_disk"`
	BlockDevices        []blockJSON       `json:"blockdevice_set"`
	PhysicalBlock       []blockJSON       `json:"physicalblockdevice_set"`
	VirtualBlock        []blockJSON       `json:"virtualblockdevice_set"`
	VolumeGroups        []vgJSON          `json:"volume_groups"`
	RAIDs               []raidJSON        `json:"raids"`
	StatusAction        *string           `json:"status_action"`
	StatusMessage       *string           `json:"status_message"`
	StatusName          string            `json:"status_name"`
	NodeType            int               `json:"node_type"`
	NodeTypeName        string            `json:"node_type_name"`
	SpecialFilesystems  []fsJSON          `json:"special_filesystems"`
	Parent              *struct{}         `json:"parent"`
	DefaultGateways     gatewaysJSON      `json:"default_gateways"`
	CommissioningResult *int64            `json:"current_commissioning_result_id"`
	TestingResult       *int64            `json:"current_testing_result_id"`
	InstallationResult  *int64            `json:"current_installation_result_id"`
	scriptStatusesJSON
	HardwareInfo        map[string]string `json:"hardware_info"`
	NUMANodes           []numaJSON        `json:"numanode_set"`
	WorkloadAnnotations map[string]string `json:"workload_annotations"`
	LastSync            *string           `json:"last_sync"`
	SyncInterval        *int              `json:"sync_interval"`
	NextSync            *string           `json:"next_sync"`
	EnableHWSync        bool              `json:"enable_hw_sync"`
	EnableCrashDump     bool              `json:"enable_kernel_crash_dump"`
	IsDPU               bool              `json:"is_dpu"`

	StatusExpires *string           `json:"status_expires"`
	PowerParams   map[string]string `json:"power_parameters,omitempty"`
	DriftPolicy   string            `json:"drift_policy"`
	PowerDrift    bool              `json:"power_drift"`
	DriftReason   string            `json:"power_drift_reason"`
	ObservedPower string            `json:"power_state_observed"`
	PowerError    string            `json:"power_error"`
}

// scriptStatusesJSON are MAAS's summaries of a machine's script results,
// each a number and its name.
type scriptStatusesJSON struct {
	Commissioning     machine.ScriptStatus `json:"commissioning_status"`
	CommissioningName string               `json:"commissioning_status_name"`
	Testing           machine.ScriptStatus `json:"testing_status"`
	TestingName       string               `json:"testing_status_name"`
	CPU               machine.ScriptStatus `json:"cpu_test_status"`
	CPUName           string               `json:"cpu_test_status_name"`
	Memory            machine.ScriptStatus `json:"memory_test_status"`
	MemoryName        string               `json:"memory_test_status_name"`
	Network           machine.ScriptStatus `json:"network_test_status"`
	NetworkName       string               `json:"network_test_status_name"`
	Storage           machine.ScriptStatus `json:"storage_test_status"`
	StorageName       string               `json:"storage_test_status_name"`
	Other             machine.ScriptStatus `json:"other_test_status"`
	OtherName         string               `json:"other_test_status_name"`
	Interface         machine.ScriptStatus `json:"interface_test_status"`
	InterfaceName     string               `json:"interface_test_status_name"`
}

// scriptStatuses fills the summaries from the machine's newest script
// sets; a machine that never ran one reads as MAAS's "no scripts" per
// hardware type.
func scriptStatuses(m *machine.Machine) scriptStatusesJSON {
	c, t, none := m.CommissioningStatus(), m.TestingStatus(), machine.NoScripts
	out := scriptStatusesJSON{Commissioning: c, Testing: t, CPU: none, Memory: none, Network: none, Storage: none, Other: none, Interface: none}
	if sc := m.Scripts; sc.Known {
		out.CPU, out.Memory, out.Network, out.Storage, out.Other, out.Interface = sc.CPU, sc.Memory, sc.Network, sc.Storage, sc.Other, sc.Interface
	}
	out.CommissioningName, out.TestingName = c.String(), t.String()
	out.CPUName, out.MemoryName, out.NetworkName = out.CPU.String(), out.Memory.String(), out.Network.String()
	out.StorageName, out.OtherName, out.InterfaceName = out.Storage.String(), out.Other.String(), out.Interface.String()
	return out
}

// gatewaysJSON is MAAS's default_gateways: per family the gateway and the
// link it is reached over, null when there is none.
type gatewaysJSON struct {
	IPv4 gatewayJSON `json:"ipv4"`
	IPv6 gatewayJSON `json:"ipv6"`
}

type gatewayJSON struct {
	GatewayIP *string `json:"gateway_ip"`
	LinkID    *int64  `json:"link_id"`
}

// numaJSON is a NUMA node. MAAS gives every machine node 0 with all its
// cores and memory until commissioning finds more.
type numaJSON struct {
	Index     int   `json:"index"`
	Cores     []int `json:"cores"`
	Memory    int64 `json:"memory"` // MiB
	Hugepages []any `json:"hugepages_set"`
}

func machineURI(id string) string { return Prefix + "machines/" + id + "/" }

func renderMachine(m *machine.Machine, n names, showParams bool) machineJSON {
	j := machineJSON{
		ResourceURI: machineURI(m.SystemID), SystemID: m.SystemID, Hostname: m.Hostname, Description: m.Description,
		HardwareUUID: optional(m.HardwareUUID), Domain: renderDomain(m.Domain), FQDN: m.FQDN(),
		OwnerData: nonNil(m.OwnerData), Locked: m.Locked, EphemeralDeploy: m.EphemeralDeploy, CacheSets: []cacheSetJSON{}, BCaches: []bcacheJSON{},
		Architecture: m.Architecture, CPUCount: m.CPUCount, Memory: m.Memory, Storage: finite(m.Storage),
		Status: int(m.Status), OSystem: m.OSystem, DistroSeries: m.DistroSeries, Netboot: m.NetbootFlag(),
		PowerType: m.PowerType, PowerState: string(m.PowerState),
		TagNames: append([]string{}, m.Tags...), IPAddresses: []string{},
		Interfaces: make([]ifaceJSON, 0, len(m.Interfaces)), Zone: n.zone(m.Zone), Pool: n.pool(m.Pool),
		BlockDevices: []blockJSON{}, PhysicalBlock: []blockJSON{}, VirtualBlock: []blockJSON{}, VolumeGroups: []vgJSON{}, RAIDs: []raidJSON{},
		StatusMessage: optional(m.StatusMessage), StatusName: m.Status.String(),
		NodeType: 0, NodeTypeName: "Machine", SpecialFilesystems: []fsJSON{},
		scriptStatusesJSON: scriptStatuses(m), HardwareInfo: hardwareInfo(m.Inventory),
		CommissioningResult: setID(m.Scripts.CommissioningSet), TestingResult: setID(m.Scripts.TestingSet),
		NUMANodes:           []numaJSON{{Cores: cores(m.CPUCount), Memory: m.Memory, Hugepages: []any{}}},
		WorkloadAnnotations: nonNil(m.OwnerData),
	}
	if j.PowerState == "" {
		j.PowerState = string(machine.PowerUnknown)
	}
	if m.Owner != "" {
		o := m.Owner
		j.Owner = &o
	}
	if j.StatusMessage != nil {
		// MAAS's status_action is the action of the event behind
		// status_message; Anvil's events carry none.
		j.StatusAction = optional("")
		if m.Status.Failed() || m.Status == machine.Broken {
			j.ErrorDescription = m.StatusMessage
		}
	}
	if !m.StatusExpires.IsZero() {
		t := m.StatusExpires.UTC().Format(time.RFC3339)
		j.StatusExpires = &t
	}
	var nics map[string]machine.NIC
	if inv := m.Inventory; inv != nil {
		j.CPUSpeed = inv.CPU.MHz
		j.BIOSBootMethod = biosBootMethod(inv.Firmware)
		nics = make(map[string]machine.NIC, len(inv.NICs))
		for _, nic := range inv.NICs {
			nics[nic.MAC] = nic
		}
	}
	if m.StorageConfig != nil || m.Inventory != nil {
		newStorageView(m.SystemID, region.StorageOf(m)).fill(&j)
	}
	for _, i := range m.Interfaces {
		j.Interfaces = append(j.Interfaces, renderIface(m.SystemID, i, nics))
	}
	if b, ok := m.BootInterface(); ok {
		bi := renderIface(m.SystemID, b, nics)
		j.BootInterface = &bi
	}
	if showParams {
		j.PowerParams = m.PowerParams
	}
	j.DriftPolicy, j.PowerDrift, j.DriftReason = string(m.DriftPolicy), m.Watch.Drift, m.Watch.Reason
	j.ObservedPower, j.PowerError = string(m.Watch.Observed), m.Watch.ReadError
	sort.Strings(j.TagNames)
	return j
}

// setID is a script set's id, null for none (0): MAAS's
// current_*_result_id before the machine ran a set of the kind.
func setID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// optional is null for "" and the string otherwise: MAAS's null rule for
// text it may not know.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// cores lists a NUMA node's cores. The count is a stored number, checked
// where it arrives (machine.CheckInventory, the API's cpu_count) but
// perhaps stored before those checks: it is clamped, so no row can make
// a list this large.
func cores(n int) []int {
	c := make([]int, min(max(n, 0), machine.MaxCPUs))
	for i := range c {
		c[i] = i
	}
	return c
}

// finite is a stored float as JSON can carry it (encoding/json refuses
// NaN and infinities, which would fail the whole answer).
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// biosBootMethod is MAAS's name for how the firmware booted: "pxe" for a
// legacy BIOS, "uefi", or null when not known.
func biosBootMethod(firmware string) *string {
	switch firmware {
	case "uefi":
		return optional("uefi")
	case "bios":
		return optional("pxe")
	}
	return nil
}

// hardwareKeys are MAAS's hardware_info keys, always all present.
var hardwareKeys = []string{
	"system_vendor", "system_product", "system_family", "system_version", "system_sku", "system_serial",
	"cpu_model", "mainboard_vendor", "mainboard_product", "mainboard_serial", "mainboard_version",
	"mainboard_firmware_vendor", "mainboard_firmware_date", "mainboard_firmware_version",
	"chassis_vendor", "chassis_type", "chassis_serial", "chassis_version",
}

// hardwareInfo is MAAS's hardware_info: its keys with "Unknown" for what
// commissioning did not find, plus Anvil's bmc_type, bmc_address and
// bmc_mac when the machine reported its BMC.
func hardwareInfo(inv *machine.Inventory) map[string]string {
	h := make(map[string]string, len(hardwareKeys)+3)
	for _, k := range hardwareKeys {
		h[k] = "Unknown"
	}
	if inv == nil {
		return h
	}
	set := func(k, v string) {
		if v != "" {
			h[k] = v
		}
	}
	set("system_vendor", inv.SMBIOS.Vendor)
	set("system_product", inv.SMBIOS.Product)
	set("system_serial", inv.SMBIOS.Serial)
	set("cpu_model", inv.CPU.Model)
	if inv.BMC != nil {
		for k, v := range map[string]string{"bmc_type": inv.BMC.Type, "bmc_address": inv.BMC.Address, "bmc_mac": inv.BMC.MAC} {
			h[k] = firstOr(v, "Unknown")
		}
	}
	return h
}

// ifaceJSON is an interface as MAAS renders one (DISPLAYED_INTERFACE_FIELDS).
// A machine the network model does not know yet has vlan null and no
// links (see netView for the model's rendering).
type ifaceJSON struct {
	ID              int64    `json:"id"`
	Name            string   `json:"name"`
	Type            string   `json:"type"`
	VLAN            any      `json:"vlan"`
	MACAddress      string   `json:"mac_address"`
	Parents         []string `json:"parents"`
	Children        []string `json:"children"`
	Tags            []string `json:"tags"`
	Enabled         bool     `json:"enabled"`
	Links           []any    `json:"links"`
	Params          any      `json:"params"` // "" or an object
	Discovered      []any    `json:"discovered"`
	EffectiveMTU    int      `json:"effective_mtu"`
	Vendor          *string  `json:"vendor"`
	Product         *string  `json:"product"`
	FirmwareVersion *string  `json:"firmware_version"`
	LinkConnected   bool     `json:"link_connected"`
	InterfaceSpeed  int      `json:"interface_speed"` // Mbit/s
	LinkSpeed       int      `json:"link_speed"`      // Mbit/s
	NUMANode        int      `json:"numa_node"`
	SRIOVMaxVF      int      `json:"sriov_max_vf"`
	SystemID        string   `json:"system_id"`
	ResourceURI     string   `json:"resource_uri"`
}

// renderIface renders one interface, with what commissioning saw of the
// NIC of the same MAC (nics may be nil).
func renderIface(systemID string, i machine.Interface, nics map[string]machine.NIC) ifaceJSON {
	j := ifaceJSON{
		ID: i.ID, Name: i.Name, Type: "physical", Enabled: true, MACAddress: i.MAC, Params: "",
		Tags: []string{}, Links: []any{}, EffectiveMTU: 1500, Parents: []string{}, Children: []string{},
		LinkConnected: true, SystemID: systemID,
		ResourceURI: Prefix + "nodes/" + systemID + "/interfaces/" + itoa(i.ID) + "/",
	}
	if nic, ok := nics[i.MAC]; ok {
		j.LinkConnected, j.InterfaceSpeed, j.LinkSpeed = nic.Link, nic.SpeedMbps, nic.SpeedMbps
	}
	return j
}

// blockJSON is a block device as MAAS renders one
// (DISPLAYED_BLOCKDEVICE_FIELDS); see render_storage.go.
type blockJSON struct {
	ID                 int64      `json:"id"`
	Name               string     `json:"name"`
	UUID               *string    `json:"uuid"`
	Type               string     `json:"type"`
	Path               string     `json:"path"`
	Model              string     `json:"model"`
	Serial             string     `json:"serial"`
	IDPath             string     `json:"id_path"`
	Size               int64      `json:"size"`
	BlockSize          int        `json:"block_size"`
	AvailableSize      int64      `json:"available_size"`
	UsedSize           int64      `json:"used_size"`
	UsedFor            string     `json:"used_for"`
	Tags               []string   `json:"tags"`
	Filesystem         *fsJSON    `json:"filesystem"`
	PartitionTableType *string    `json:"partition_table_type"`
	Partitions         []partJSON `json:"partitions"`
	FirmwareVersion    *string    `json:"firmware_version"`
	StoragePool        *string    `json:"storage_pool"`
	NUMANode           int        `json:"numa_node"`
	SystemID           string     `json:"system_id"`
	ResourceURI        string     `json:"resource_uri"`
}
