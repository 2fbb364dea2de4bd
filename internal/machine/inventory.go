package machine

// Inventory is what commissioning found on a machine, as the ephemeral
// environment reported it. It is stored as given (structured); the raw
// files it was read from are stored beside it as results.
type Inventory struct {
	CPU       CPU      `json:"cpu"`
	MemoryMiB int64    `json:"memory_mib"`
	Disks     []Disk   `json:"disks,omitempty"`
	NICs      []NIC    `json:"nics,omitempty"`
	Firmware  string   `json:"firmware,omitempty"` // "bios" or "uefi"
	SMBIOS    SMBIOS   `json:"smbios"`
	BMC       *BMCInfo `json:"bmc,omitempty"`
}

// CPU describes the processors.
type CPU struct {
	Model   string `json:"model,omitempty"`
	Sockets int    `json:"sockets,omitempty"`
	Cores   int    `json:"cores,omitempty"`   // physical cores in all
	Threads int    `json:"threads,omitempty"` // logical CPUs in all
	MHz     int    `json:"mhz,omitempty"`
}

// Disk is a block device.
type Disk struct {
	Name       string `json:"name"` // kernel name: sda, vda, nvme0n1
	Model      string `json:"model,omitempty"`
	Serial     string `json:"serial,omitempty"`
	Size       int64  `json:"size"` // bytes
	BlockSize  int    `json:"block_size,omitempty"`
	Rotational bool   `json:"rotational"`
	// IDPath is the stable /dev/disk/by-id path, when udev made one.
	IDPath    string `json:"id_path,omitempty"`
	Removable bool   `json:"removable,omitempty"`
}

// NIC is a network interface the environment saw.
type NIC struct {
	Name      string `json:"name"`
	MAC       string `json:"mac"`
	Driver    string `json:"driver,omitempty"`
	Link      bool   `json:"link"`
	SpeedMbps int    `json:"speed_mbps,omitempty"`
}

// SMBIOS is the firmware's description of the system.
type SMBIOS struct {
	Vendor  string `json:"vendor,omitempty"`
	Product string `json:"product,omitempty"`
	Serial  string `json:"serial,omitempty"`
	UUID    string `json:"uuid,omitempty"`
}

// BMCInfo is the BMC a machine sits behind, as read from inside it.
type BMCInfo struct {
	Type    string `json:"type"` // "ipmi" or "redfish"
	Address string `json:"address,omitempty"`
	MAC     string `json:"mac,omitempty"`
	Port    int    `json:"port,omitempty"`
}

// Clone returns a deep copy.
func (inv Inventory) Clone() Inventory {
	c := inv
	c.Disks = append([]Disk(nil), inv.Disks...)
	c.NICs = append([]NIC(nil), inv.NICs...)
	if inv.BMC != nil {
		b := *inv.BMC
		c.BMC = &b
	}
	return c
}
