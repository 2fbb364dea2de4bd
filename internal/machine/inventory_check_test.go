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
	} {
		inv := ok.Clone()
		edit(&inv)
		err := CheckInventory(inv)
		if err == nil || !strings.HasPrefix(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming it", name, err)
		}
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
