package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
)

const fixture = "testdata/host1"

func TestCollectInventory(t *testing.T) {
	inv := CollectInventory(fixture)
	if want := (machine.CPU{Model: "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz", Sockets: 2, Cores: 4, Threads: 8, MHz: 2100}); inv.CPU != want {
		t.Errorf("CPU = %+v, want %+v", inv.CPU, want)
	}
	if inv.MemoryMiB != 15933 {
		t.Errorf("memory = %d MiB", inv.MemoryMiB)
	}
	wantDisks := []machine.Disk{
		{Name: "nvme0n1", Model: "Samsung SSD 970", Serial: "S4EWNX0N", Size: 1953525168 * 512, BlockSize: 4096},
		{Name: "sda", Model: "ST2000NM0055-1V4", Serial: "ZBS1ABCD", Size: 3907029168 * 512, BlockSize: 512, Rotational: true},
		{Name: "vda", Serial: "anvil-disk0", Size: 64 << 20, BlockSize: 512},
	}
	if !reflect.DeepEqual(inv.Disks, wantDisks) {
		t.Errorf("disks = %+v\nwant %+v", inv.Disks, wantDisks)
	}
	wantNICs := []machine.NIC{
		{Name: "eno1", MAC: "0c:c4:7a:11:22:33", Driver: "igb", Link: true, SpeedMbps: 1000},
		{Name: "enp2s0", MAC: "0c:c4:7a:11:22:34", Driver: "ixgbe"},
	}
	if !reflect.DeepEqual(inv.NICs, wantNICs) {
		t.Errorf("NICs = %+v\nwant %+v", inv.NICs, wantNICs)
	}
	if inv.Firmware != "uefi" {
		t.Errorf("firmware = %q", inv.Firmware)
	}
	if want := (machine.SMBIOS{Vendor: "Supermicro", Product: "SYS-6019P", Serial: "S123", UUID: "00112233-4455-6677-8899-aabbccddeeff"}); inv.SMBIOS != want {
		t.Errorf("SMBIOS = %+v", inv.SMBIOS)
	}
}

func TestCollectEmptyRoot(t *testing.T) {
	inv := CollectInventory(t.TempDir())
	if inv.CPU != (machine.CPU{}) || inv.MemoryMiB != 0 || len(inv.Disks) != 0 || len(inv.NICs) != 0 || inv.Firmware != "bios" {
		t.Fatalf("empty root gave %+v", inv)
	}
}

func TestRawFiles(t *testing.T) {
	files := RawFiles(fixture)
	for name, want := range map[string]string{
		"cpuinfo": "Gold 6130", "meminfo": "MemTotal", "dmi-id": "product_uuid: 00112233",
		"block-devices": `sda size=2000398934016 model="ST2000NM0055-1V4"`, "net-devices": "eno1 address=0C:C4:7A:11:22:33 driver=igb",
	} {
		if !strings.Contains(string(files[name]), want) {
			t.Errorf("%s = %q, want it to contain %q", name, files[name], want)
		}
	}
}

// What the agent collects is what the region takes: an older kernel's
// unknown speed (4294967295) is no speed, not a refused inventory.
func TestCollectedInventoryPassesTheRegionsCheck(t *testing.T) {
	if err := machine.CheckInventory(*CollectInventory(fixture)); err != nil {
		t.Errorf("the fixture's inventory: %v", err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "sys/class/net/eth0")
	if err := os.MkdirAll(filepath.Join(dir, "device"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"address": "52:54:00:00:00:01\n", "carrier": "0\n", "speed": "4294967295\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inv := CollectInventory(root)
	if len(inv.NICs) != 1 || inv.NICs[0].SpeedMbps != 0 {
		t.Fatalf("NICs = %+v, want eth0 without a speed", inv.NICs)
	}
	if err := machine.CheckInventory(*inv); err != nil {
		t.Error(err)
	}
}
