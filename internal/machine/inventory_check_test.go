package machine

import (
	"strings"
	"testing"
)

func TestCheckInventory(t *testing.T) {
	ok := Inventory{CPU: CPU{Model: "Xeon"}, Disks: []Disk{{Name: "sda", Model: "SSD", Serial: "S1"}},
		NICs: []NIC{{Name: "eno1", MAC: "52:54:00:00:00:01", Driver: "ixgbe"}}, BMC: &BMCInfo{Type: "ipmi", Address: "192.0.2.9"}}
	if err := CheckInventory(ok); err != nil {
		t.Fatalf("a real inventory: %v", err)
	}
	long := strings.Repeat("x", 300)
	for name, edit := range map[string]func(*Inventory){
		"cpu.model":       func(i *Inventory) { i.CPU.Model = long },
		"disks[0].model":  func(i *Inventory) { i.Disks[0].Model = long },
		"disks[0].serial": func(i *Inventory) { i.Disks[0].Serial = long },
		"disks[0].name":   func(i *Inventory) { i.Disks[0].Name = strings.Repeat("s", 65) },
		"nics[0].driver":  func(i *Inventory) { i.NICs[0].Driver = strings.Repeat("d", 65) },
		"smbios.product":  func(i *Inventory) { i.SMBIOS.Product = long },
		"bmc.address":     func(i *Inventory) { i.BMC.Address = long },
		"firmware":        func(i *Inventory) { i.Firmware = strings.Repeat("f", 65) },
		"disks:":          func(i *Inventory) { i.Disks = make([]Disk, MaxInventoryDisks+1) },
		"nics:":           func(i *Inventory) { i.NICs = make([]NIC, MaxInventoryNICs+1) },
		// Numbers: renderers and plans size lists and sums by them.
		"cpu.threads":            func(i *Inventory) { i.CPU.Threads = 1_000_000_000_000 },
		"cpu.cores":              func(i *Inventory) { i.CPU.Cores = MaxCPUs + 1 },
		"cpu.sockets":            func(i *Inventory) { i.CPU.Sockets = -1 },
		"cpu.mhz":                func(i *Inventory) { i.CPU.MHz = 1 << 40 },
		"memory_mib":             func(i *Inventory) { i.MemoryMiB = -5 },
		"disks[0].size":          func(i *Inventory) { i.Disks[0].Size = 1 << 62 },
		"disks[0].block_size":    func(i *Inventory) { i.Disks[0].BlockSize = 1 << 30 },
		"disks[0].block_size:":   func(i *Inventory) { i.Disks[0].BlockSize = 1000 },
		"nics[0].speed_mbps":     func(i *Inventory) { i.NICs[0].SpeedMbps = -100 },
		"bmc.port":               func(i *Inventory) { i.BMC.Port = 70000 },
		"nics[0].name: contains": func(i *Inventory) { i.NICs[0].Name = "eth\x000" },
		"smbios.serial: is not":  func(i *Inventory) { i.SMBIOS.Serial = "\xff\xfe" },
	} {
		inv := ok.Clone()
		edit(&inv)
		err := CheckInventory(inv)
		if err == nil || !strings.HasPrefix(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming it", name, err)
		}
	}
}

// The largest real machine passes: every bound is far past it.
func TestCheckInventoryLargestMachine(t *testing.T) {
	inv := Inventory{CPU: CPU{Sockets: 32, Cores: 8192, Threads: 16384, MHz: 5000}, MemoryMiB: 48 << 20,
		Disks: []Disk{{Name: "sda", Size: 100e12, BlockSize: 4096}, {Name: "sdb", Size: 1 << 40}},
		NICs:  []NIC{{Name: "eth0", SpeedMbps: 800_000}}, BMC: &BMCInfo{Type: "redfish", Port: 443}}
	if err := CheckInventory(inv); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeInventory(t *testing.T) {
	for body, want := range map[string]string{
		`{"cpu":{"threads":1000000000000}}`:           "cpu.threads",
		`{"cpu":{"threads":1e400}}`:                   "cpu.threads",
		`{"memory_mib":1e19}`:                         "memory_mib",
		`{"disks":[{"name":"sda","block_size":0.5}]}`: "block_size",
		`{"nics":[{"name":"e\u0000","mac":"x"}]}`:     "nics.name contains a NUL",
		"{\"smbios\":{\"vendor\":\"\xff\"}}":          "not valid UTF-8",
	} {
		if _, err := DecodeInventory([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", body, err, want)
		}
	}
	if inv, err := DecodeInventory([]byte(`{"cpu":{"threads":64},"memory_mib":65536}`)); err != nil || inv.CPU.Threads != 64 {
		t.Errorf("a real inventory: %+v %v", inv, err)
	}
}

func TestCheckResultFiles(t *testing.T) {
	if err := CheckResultFiles(map[string][]byte{"cpuinfo": make([]byte, 1<<10)}); err != nil {
		t.Fatal(err)
	}
	big := map[string][]byte{}
	for i := 0; i < 5; i++ {
		big[strings.Repeat("f", i+1)] = make([]byte, MaxResultFileBytes)
	}
	for name, files := range map[string]map[string][]byte{
		"one file too large": {"lshw": make([]byte, MaxResultFileBytes+1)},
		"too much in all":    big,
		"long name":          {strings.Repeat("n", MaxResultFileName+1): nil},
	} {
		if err := CheckResultFiles(files); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
