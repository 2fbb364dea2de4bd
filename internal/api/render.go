package api

import (
	"sort"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// machineJSON is a machine as MAAS renders it. Field names and types are
// what clients parse (gomaasapi checks them strictly), so absent features
// still appear, empty, rather than missing.
type machineJSON struct {
	ResourceURI    string            `json:"resource_uri"`
	SystemID       string            `json:"system_id"`
	Hostname       string            `json:"hostname"`
	FQDN           string            `json:"fqdn"`
	Domain         domainJSON        `json:"domain"`
	Description    string            `json:"description"`
	Architecture   string            `json:"architecture"`
	Status         int               `json:"status"`
	StatusName     string            `json:"status_name"`
	StatusMessage  string            `json:"status_message"`
	StatusExpires  *string           `json:"status_expires"`
	PowerState     string            `json:"power_state"`
	PowerType      string            `json:"power_type"`
	Owner          *string           `json:"owner"`
	OwnerData      map[string]string `json:"owner_data"`
	Zone           zoneJSON          `json:"zone"`
	Pool           poolJSON          `json:"pool"`
	CPUCount       int               `json:"cpu_count"`
	Memory         int64             `json:"memory"`
	Storage        float64           `json:"storage"`
	TagNames       []string          `json:"tag_names"`
	BootInterface  *ifaceJSON        `json:"boot_interface"`
	Interfaces     []ifaceJSON       `json:"interface_set"`
	IPAddresses    []string          `json:"ip_addresses"`
	HardwareUUID   string            `json:"hardware_uuid"`
	HardwareInfo   map[string]string `json:"hardware_info"`
	OSystem        string            `json:"osystem"`
	DistroSeries   string            `json:"distro_series"`
	Netboot        bool              `json:"netboot"`
	NodeType       int               `json:"node_type"`
	NodeTypeName   string            `json:"node_type_name"`
	Locked         bool              `json:"locked"`
	PhysicalBlock  []any             `json:"physicalblockdevice_set"`
	BlockDevices   []any             `json:"blockdevice_set"`
	PowerParams    map[string]string `json:"power_parameters,omitempty"`
	DriftPolicy    string            `json:"drift_policy"`
	PowerDrift     bool              `json:"power_drift"`
	DriftReason    string            `json:"power_drift_reason"`
	ObservedPower  string            `json:"power_state_observed"`
	PowerError     string            `json:"power_error"`
	ConstraintsMap *struct{}         `json:"constraints_by_type,omitempty"`
}

type domainJSON struct {
	ID          int    `json:"id"`
	Name        string `json:"name"`
	ResourceURI string `json:"resource_uri"`
}

type zoneJSON struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	ResourceURI string `json:"resource_uri"`
}

type poolJSON zoneJSON

type ifaceJSON struct {
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	Type         string   `json:"type"`
	Enabled      bool     `json:"enabled"`
	MACAddress   string   `json:"mac_address"`
	Tags         []string `json:"tags"`
	VLAN         any      `json:"vlan"`
	Links        []any    `json:"links"`
	EffectiveMTU int      `json:"effective_mtu"`
	Parents      []string `json:"parents"`
	Children     []string `json:"children"`
	SystemID     string   `json:"system_id"`
	ResourceURI  string   `json:"resource_uri"`
}

// names resolves zone and pool names to their rendered form; lists look
// each one up once rather than once per machine.
type names struct {
	zones map[string]zoneJSON
	pools map[string]poolJSON
}

func (s *Server) loadNames(r *request) (names, error) {
	zs, err := s.store.ListZones(r.Context())
	if err != nil {
		return names{}, err
	}
	ps, err := s.store.ListPools(r.Context())
	if err != nil {
		return names{}, err
	}
	n := names{zones: map[string]zoneJSON{}, pools: map[string]poolJSON{}}
	for _, z := range zs {
		n.zones[z.Name] = renderZone(z)
	}
	for _, p := range ps {
		n.pools[p.Name] = renderPool(p)
	}
	return n, nil
}

// zone and pool render a machine's zone and pool as renderMachine does.
func (n names) zone(name string) zoneJSON {
	if z, ok := n.zones[name]; ok {
		return z
	}
	return zoneJSON{Name: name, ResourceURI: Prefix + "zones/" + name + "/"}
}

func (n names) pool(name string) poolJSON {
	if p, ok := n.pools[name]; ok {
		return p
	}
	return poolJSON{Name: name}
}

func renderZone(z store.Zone) zoneJSON {
	return zoneJSON{ID: z.ID, Name: z.Name, Description: z.Description, ResourceURI: Prefix + "zones/" + z.Name + "/"}
}

func renderPool(p store.Pool) poolJSON {
	return poolJSON{ID: p.ID, Name: p.Name, Description: p.Description, ResourceURI: Prefix + "resourcepool/" + itoa(p.ID) + "/"}
}

func machineURI(id string) string { return Prefix + "machines/" + id + "/" }

func renderMachine(m *machine.Machine, n names, showParams bool) machineJSON {
	j := machineJSON{
		ResourceURI: machineURI(m.SystemID), SystemID: m.SystemID, Hostname: m.Hostname, FQDN: m.FQDN(),
		Domain:      domainJSON{ID: 0, Name: m.Domain, ResourceURI: Prefix + "domains/0/"},
		Description: m.Description, Architecture: m.Architecture,
		Status: int(m.Status), StatusName: m.Status.String(), StatusMessage: m.StatusMessage,
		PowerState: string(m.PowerState), PowerType: m.PowerType,
		OwnerData: map[string]string{}, HardwareInfo: map[string]string{},
		Zone: n.zone(m.Zone), Pool: n.pool(m.Pool),
		CPUCount: m.CPUCount, Memory: m.Memory, Storage: m.Storage,
		TagNames: append([]string{}, m.Tags...), IPAddresses: []string{},
		HardwareUUID: m.HardwareUUID, OSystem: m.OSystem, DistroSeries: m.DistroSeries, Netboot: m.Netboot,
		NodeTypeName: "Machine", PhysicalBlock: []any{}, BlockDevices: []any{},
		Interfaces: make([]ifaceJSON, 0, len(m.Interfaces)),
	}
	if j.PowerState == "" {
		j.PowerState = string(machine.PowerUnknown)
	}
	if m.Owner != "" {
		o := m.Owner
		j.Owner = &o
	}
	if !m.StatusExpires.IsZero() {
		t := m.StatusExpires.UTC().Format(time.RFC3339)
		j.StatusExpires = &t
	}
	for _, i := range m.Interfaces {
		j.Interfaces = append(j.Interfaces, renderIface(m.SystemID, i))
	}
	if b, ok := m.BootInterface(); ok {
		bi := renderIface(m.SystemID, b)
		j.BootInterface = &bi
	}
	if inv := m.Inventory; inv != nil {
		j.HardwareInfo = hardwareInfo(inv)
		for k, d := range inv.Disks {
			bd := renderDisk(m.SystemID, k+1, d)
			j.PhysicalBlock, j.BlockDevices = append(j.PhysicalBlock, bd), append(j.BlockDevices, bd)
		}
	}
	if showParams {
		j.PowerParams = m.PowerParams
	}
	j.DriftPolicy, j.PowerDrift, j.DriftReason = string(m.DriftPolicy), m.Watch.Drift, m.Watch.Reason
	j.ObservedPower, j.PowerError = string(m.Watch.Observed), m.Watch.ReadError
	sort.Strings(j.TagNames)
	return j
}

func renderIface(systemID string, i machine.Interface) ifaceJSON {
	return ifaceJSON{
		ID: i.ID, Name: i.Name, Type: "physical", Enabled: true, MACAddress: i.MAC,
		Tags: []string{}, Links: []any{}, EffectiveMTU: 1500, Parents: []string{}, Children: []string{},
		SystemID: systemID, ResourceURI: Prefix + "nodes/" + systemID + "/interfaces/" + itoa(i.ID) + "/",
	}
}

// hardwareInfo is MAAS's hardware_info summary of an inventory.
func hardwareInfo(inv *machine.Inventory) map[string]string {
	h := map[string]string{
		"system_vendor": inv.SMBIOS.Vendor, "system_product": inv.SMBIOS.Product, "system_serial": inv.SMBIOS.Serial,
		"cpu_model": inv.CPU.Model, "firmware": inv.Firmware,
	}
	if inv.CPU.MHz > 0 {
		h["cpu_speed"] = itoa(int64(inv.CPU.MHz)) + " MHz"
	}
	if inv.BMC != nil {
		h["bmc_type"], h["bmc_address"], h["bmc_mac"] = inv.BMC.Type, inv.BMC.Address, inv.BMC.MAC
	}
	for k, v := range h {
		if v == "" {
			h[k] = "Unknown"
		}
	}
	return h
}

// blockJSON is a physical block device as MAAS renders one.
type blockJSON struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Model       string   `json:"model"`
	Serial      string   `json:"serial"`
	Size        int64    `json:"size"`
	BlockSize   int      `json:"block_size"`
	Path        string   `json:"path"`
	IDPath      string   `json:"id_path"`
	Tags        []string `json:"tags"`
	SystemID    string   `json:"system_id"`
	ResourceURI string   `json:"resource_uri"`
}

func renderDisk(systemID string, id int, d machine.Disk) any {
	tag := "ssd"
	if d.Rotational {
		tag = "rotary"
	}
	bs := d.BlockSize
	if bs == 0 {
		bs = 512
	}
	return blockJSON{
		ID: int64(id), Name: d.Name, Type: "physical", Model: d.Model, Serial: d.Serial, Size: d.Size, BlockSize: bs,
		Path: "/dev/disk/by-dname/" + d.Name, IDPath: "/dev/" + d.Name, Tags: []string{tag}, SystemID: systemID,
		ResourceURI: Prefix + "nodes/" + systemID + "/blockdevices/" + itoa(int64(id)) + "/",
	}
}

// maasTime is the timestamp format of MAAS's event answers.
const maasTime = "Mon, 02 Jan. 2006 15:04:05"

type eventJSON struct {
	ID          int64  `json:"id"`
	Node        string `json:"node"`
	Hostname    string `json:"hostname"`
	Username    string `json:"username"`
	Level       string `json:"level"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Created     string `json:"created"`
}

func renderEvent(e machine.Event) eventJSON {
	return eventJSON{
		ID: e.ID, Node: e.SystemID, Hostname: e.Hostname, Username: e.User, Level: string(e.Level),
		Type: e.Type, Description: e.Description, Created: e.Created.UTC().Format(maasTime),
	}
}
