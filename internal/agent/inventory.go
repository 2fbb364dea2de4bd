package agent

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
)

// The collectors read procfs and sysfs under root ("/" on a machine, a
// fixture tree in tests).

func readTrim(root string, elem ...string) string {
	b, err := os.ReadFile(filepath.Join(append([]string{root}, elem...)...))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func readInt(root string, elem ...string) int64 {
	n, _ := strconv.ParseInt(readTrim(root, elem...), 10, 64)
	return n
}

func exists(root string, elem ...string) bool {
	_, err := os.Stat(filepath.Join(append([]string{root}, elem...)...))
	return err == nil
}

// CollectCPU reads /proc/cpuinfo.
func CollectCPU(root string) machine.CPU {
	var c machine.CPU
	b, err := os.ReadFile(filepath.Join(root, "proc/cpuinfo"))
	if err != nil {
		return c
	}
	sockets := map[string]int{} // physical id → cpu cores
	sc := bufio.NewScanner(bytes.NewReader(b))
	phys := ""
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			c.Threads++
			phys = ""
		case "model name":
			if c.Model == "" {
				c.Model = v
			}
		case "cpu MHz":
			if c.MHz == 0 {
				f, _ := strconv.ParseFloat(v, 64)
				c.MHz = int(f + 0.5)
			}
		case "physical id":
			phys = v
			if _, ok := sockets[phys]; !ok {
				sockets[phys] = 0
			}
		case "cpu cores":
			n, _ := strconv.Atoi(v)
			sockets[phys] = n
		}
	}
	c.Sockets = len(sockets)
	for _, n := range sockets {
		c.Cores += n
	}
	if c.Threads > 0 && c.Sockets == 0 {
		c.Sockets = 1
	}
	if c.Cores == 0 {
		c.Cores = c.Threads
	}
	return c
}

// CollectMemoryMiB reads MemTotal from /proc/meminfo.
func CollectMemoryMiB(root string) int64 {
	b, err := os.ReadFile(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb / 1024
		}
	}
	return 0
}

// CollectDisks reads /sys/block, leaving out loop, ram, zram and
// device-mapper devices and anything with no medium (empty CD drives).
func CollectDisks(root string) []machine.Disk {
	ents, _ := os.ReadDir(filepath.Join(root, "sys/block"))
	var out []machine.Disk
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "loop") || strings.HasPrefix(n, "ram") || strings.HasPrefix(n, "zram") || strings.HasPrefix(n, "dm-") {
			continue
		}
		size := readInt(root, "sys/block", n, "size") * 512
		if size == 0 {
			continue
		}
		d := machine.Disk{
			Name:       n,
			Model:      readTrim(root, "sys/block", n, "device/model"),
			Serial:     diskSerial(root, n),
			Size:       size,
			BlockSize:  int(readInt(root, "sys/block", n, "queue/logical_block_size")),
			Rotational: readTrim(root, "sys/block", n, "queue/rotational") == "1",
		}
		out = append(out, d)
	}
	return out
}

func diskSerial(root, n string) string {
	for _, f := range []string{"device/serial", "serial"} {
		if s := readTrim(root, "sys/block", n, f); s != "" {
			return s
		}
	}
	// VPD page 0x80: four header bytes, then the serial.
	if b, err := os.ReadFile(filepath.Join(root, "sys/block", n, "device/vpd_pg80")); err == nil && len(b) > 4 {
		if s := strings.TrimSpace(strings.Trim(string(b[4:]), "\x00")); s != "" {
			return s
		}
	}
	for _, f := range []string{"device/wwid", "wwid"} {
		if s := readTrim(root, "sys/block", n, f); s != "" {
			return s
		}
	}
	return ""
}

// PhysicalNICs lists the interfaces in /sys/class/net backed by a device.
func PhysicalNICs(root string) []string {
	ents, _ := os.ReadDir(filepath.Join(root, "sys/class/net"))
	var out []string
	for _, e := range ents {
		if exists(root, "sys/class/net", e.Name(), "device") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// CollectNICs reads the physical interfaces in /sys/class/net.
func CollectNICs(root string) []machine.NIC {
	var out []machine.NIC
	for _, n := range PhysicalNICs(root) {
		nic := machine.NIC{
			Name: n,
			MAC:  NormaliseMAC(readTrim(root, "sys/class/net", n, "address")),
			Link: readTrim(root, "sys/class/net", n, "carrier") == "1",
		}
		if l, err := os.Readlink(filepath.Join(root, "sys/class/net", n, "device/driver")); err == nil {
			nic.Driver = filepath.Base(l)
		}
		// Older kernels print an unknown speed as 4294967295: not a speed,
		// and past what the region takes (machine.MaxNICSpeedMbp).
		if s := readInt(root, "sys/class/net", n, "speed"); s > 0 && s <= machine.MaxNICSpeedMbp {
			nic.SpeedMbps = int(s)
		}
		out = append(out, nic)
	}
	return out
}

// CollectFirmware is "uefi" when the kernel booted through EFI.
func CollectFirmware(root string) string {
	if exists(root, "sys/firmware/efi") {
		return "uefi"
	}
	return "bios"
}

// dmiFiles are the /sys/class/dmi/id files kept as a raw result.
var dmiFiles = []string{"sys_vendor", "product_name", "product_version", "product_serial", "product_uuid",
	"board_vendor", "board_name", "board_serial", "chassis_vendor", "chassis_type", "bios_vendor", "bios_version", "bios_date"}

// CollectSMBIOS reads /sys/class/dmi/id.
func CollectSMBIOS(root string) machine.SMBIOS {
	d := func(f string) string { return readTrim(root, "sys/class/dmi/id", f) }
	return machine.SMBIOS{Vendor: d("sys_vendor"), Product: d("product_name"), Serial: d("product_serial"), UUID: strings.ToLower(d("product_uuid"))}
}

// CollectInventory runs every collector; the BMC is the caller's to add.
func CollectInventory(root string) *machine.Inventory {
	return &machine.Inventory{
		CPU:       CollectCPU(root),
		MemoryMiB: CollectMemoryMiB(root),
		Disks:     CollectDisks(root),
		NICs:      CollectNICs(root),
		Firmware:  CollectFirmware(root),
		SMBIOS:    CollectSMBIOS(root),
	}
}

// RawFiles are the files the inventory was read from, as result files.
func RawFiles(root string) map[string][]byte {
	out := map[string][]byte{}
	for name, p := range map[string]string{"cpuinfo": "proc/cpuinfo", "meminfo": "proc/meminfo"} {
		if b, err := os.ReadFile(filepath.Join(root, p)); err == nil {
			out[name] = b
		}
	}
	var dmi strings.Builder
	for _, f := range dmiFiles {
		if v := readTrim(root, "sys/class/dmi/id", f); v != "" {
			fmt.Fprintf(&dmi, "%s: %s\n", f, v)
		}
	}
	out["dmi-id"] = []byte(dmi.String())
	var blk strings.Builder
	ents, _ := os.ReadDir(filepath.Join(root, "sys/block"))
	for _, e := range ents {
		n := e.Name()
		fmt.Fprintf(&blk, "%s size=%d model=%q serial=%q logical_block_size=%s rotational=%s\n", n,
			readInt(root, "sys/block", n, "size")*512, readTrim(root, "sys/block", n, "device/model"), diskSerial(root, n),
			readTrim(root, "sys/block", n, "queue/logical_block_size"), readTrim(root, "sys/block", n, "queue/rotational"))
	}
	out["block-devices"] = []byte(blk.String())
	var nets strings.Builder
	ents, _ = os.ReadDir(filepath.Join(root, "sys/class/net"))
	for _, e := range ents {
		n := e.Name()
		driver := ""
		if l, err := os.Readlink(filepath.Join(root, "sys/class/net", n, "device/driver")); err == nil {
			driver = filepath.Base(l)
		}
		fmt.Fprintf(&nets, "%s address=%s driver=%s carrier=%s speed=%s operstate=%s\n", n,
			readTrim(root, "sys/class/net", n, "address"), driver, readTrim(root, "sys/class/net", n, "carrier"),
			readTrim(root, "sys/class/net", n, "speed"), readTrim(root, "sys/class/net", n, "operstate"))
	}
	out["net-devices"] = []byte(nets.String())
	return out
}
