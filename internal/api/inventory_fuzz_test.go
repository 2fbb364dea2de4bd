package api

import (
	"encoding/json"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
)

// FuzzInventory feeds the inventory decoder the environment's JSON goes
// through (machine.DecodeInventory: the text check, the decode and
// CheckInventory, as an enlistment's body and a signal's inventory file
// take), and requires that whatever it accepts is within the bounds,
// survives commissioning's storage layouts, and renders as MAAS's machine
// JSON (what machines/, nodes/ and machines/<id>/ answer).
func FuzzInventory(f *testing.F) {
	for _, seed := range []string{
		`{"cpu":{"model":"Xeon","sockets":2,"cores":32,"threads":64,"mhz":2400},"memory_mib":262144,` +
			`"disks":[{"name":"sda","size":960197124096,"block_size":512},{"name":"nvme0n1","size":3840755982336,"block_size":4096}],` +
			`"nics":[{"name":"eno1","mac":"52:54:00:12:34:56","link":true,"speed_mbps":25000}],"firmware":"uefi",` +
			`"bmc":{"type":"ipmi","address":"192.0.2.9","port":623}}`,
		`{"cpu":{"threads":1000000000000}}`,
		`{"cpu":{"threads":16384,"cores":16384,"sockets":16384},"memory_mib":1073741824}`,
		`{"cpu":{"threads":-1}}`,
		`{"memory_mib":9223372036854775807}`,
		`{"disks":[{"name":"sda","size":4503599627370496,"block_size":65536},{"name":"sdb","size":4503599627370496}]}`,
		`{"disks":[{"name":"sda","size":1,"block_size":1}]}`,
		`{"nics":[{"name":"e\u0000","mac":"52:54:00:00:00:01","speed_mbps":1e400}]}`,
		`{"cpu":{"mhz":NaN}}`,
		`{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := machine.DecodeInventory(data)
		if err != nil {
			return
		}
		inBounds(t, inv)
		for _, layout := range []string{"flat", "lvm", "bcache", ""} {
			m := machine.Machine{SystemID: "fuzz01", Hostname: "fuzz", Status: machine.Commissioning, CPUCount: 1}
			machine.ApplyInventory(&m, inv)
			m.StorageConfig, _ = machine.StorageAfterCommissioning(nil, inv, layout)
			if _, err := json.Marshal(renderMachine(&m, names{}, true)); err != nil {
				t.Fatalf("layout %q: the machine does not render: %v", layout, err)
			}
		}
	})
}

// inBounds fails the test for an accepted inventory with a number
// outside what CheckInventory promises.
func inBounds(t *testing.T, inv machine.Inventory) {
	t.Helper()
	in := func(name string, v, lo, hi int64) {
		if v < lo || v > hi {
			t.Fatalf("%s = %d accepted; bounds %d to %d", name, v, lo, hi)
		}
	}
	in("cpu.threads", int64(inv.CPU.Threads), 0, machine.MaxCPUs)
	in("cpu.cores", int64(inv.CPU.Cores), 0, machine.MaxCPUs)
	in("cpu.sockets", int64(inv.CPU.Sockets), 0, machine.MaxCPUs)
	in("cpu.mhz", int64(inv.CPU.MHz), 0, machine.MaxCPUMHz)
	in("memory_mib", inv.MemoryMiB, 0, machine.MaxMemoryMiB)
	in("disks", int64(len(inv.Disks)), 0, machine.MaxInventoryDisks)
	in("nics", int64(len(inv.NICs)), 0, machine.MaxInventoryNICs)
	for _, d := range inv.Disks {
		in("disk size", d.Size, 0, machine.MaxDiskBytes)
		in("block size", int64(d.BlockSize), 0, machine.MaxBlockSize)
	}
	for _, n := range inv.NICs {
		in("speed", int64(n.SpeedMbps), 0, machine.MaxNICSpeedMbp)
	}
	if inv.BMC != nil {
		in("bmc.port", int64(inv.BMC.Port), 0, machine.MaxPort)
	}
}
