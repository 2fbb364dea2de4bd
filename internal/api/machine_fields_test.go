package api_test

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
)

// machineSchema is MAAS's DISPLAYED_MACHINE_FIELDS (src/maasserver/api/
// machines.py) and resource_uri, each with the JSON kind MAAS gives it;
// constraints_by_type, the 80th, appears only in allocation answers.
var machineSchema = schema{
	"resource_uri": str, "system_id": str, "hostname": str, "description": str, "hardware_uuid": strNull,
	"domain": object, "fqdn": str, "owner": strNull, "owner_data": object, "locked": boolean,
	"cache_sets": array, "bcaches": array, "bios_boot_method": strNull, "boot_interface": objNull,
	"architecture": strNull, "min_hwe_kernel": strNull, "hwe_kernel": strNull, "cpu_count": integer,
	"cpu_speed": integer, "memory": integer, "swap_size": intNull, "storage": number, "status": integer,
	"osystem": str, "distro_series": str, "ephemeral_deploy": boolean, "error_description": str,
	"netboot": boolean, "power_type": str, "power_state": str, "tag_names": array, "address_ttl": intNull,
	"ip_addresses": array, "interface_set": array, "zone": object, "pool": object, "disable_ipv4": boolean,
	"boot_disk": objNull, "blockdevice_set": array, "physicalblockdevice_set": array,
	"virtualblockdevice_set": array, "volume_groups": array, "raids": array, "status_action": strNull,
	"status_message": strNull, "status_name": str, "node_type": integer, "node_type_name": str,
	"special_filesystems": array, "parent": objNull, "default_gateways": object,
	"current_commissioning_result_id": intNull, "current_testing_result_id": intNull,
	"current_installation_result_id": intNull,
	"commissioning_status":           integer, "commissioning_status_name": str,
	"testing_status": integer, "testing_status_name": str,
	"cpu_test_status": integer, "cpu_test_status_name": str,
	"memory_test_status": integer, "memory_test_status_name": str,
	"network_test_status": integer, "network_test_status_name": str,
	"storage_test_status": integer, "storage_test_status_name": str,
	"other_test_status": integer, "other_test_status_name": str,
	"interface_test_status": integer, "interface_test_status_name": str,
	"hardware_info": object, "numanode_set": array, "workload_annotations": object,
	"last_sync": strNull, "sync_interval": intNull, "next_sync": strNull, "enable_hw_sync": boolean,
	"enable_kernel_crash_dump": boolean, "is_dpu": boolean,
}

var (
	domainSchema = schema{"id": integer, "name": str, "ttl": intNull, "authoritative": boolean,
		"resource_record_count": integer, "is_default": boolean, "resource_uri": str}
	zoneSchema      = schema{"id": integer, "name": str, "description": str, "resource_uri": str}
	interfaceSchema = schema{
		"system_id": str, "id": integer, "name": str, "type": str, "vlan": objNull, "mac_address": str,
		"parents": array, "children": array, "tags": array, "enabled": boolean, "links": array, "params": str,
		"discovered": arrNull, "effective_mtu": integer, "vendor": strNull, "product": strNull,
		"firmware_version": strNull, "link_connected": boolean, "interface_speed": integer,
		"link_speed": integer, "numa_node": integer, "sriov_max_vf": integer, "resource_uri": str,
	}
	blockSchema = schema{
		"system_id": str, "id": integer, "name": str, "uuid": strNull, "type": str, "path": str,
		"model": strNull, "serial": strNull, "id_path": strNull, "size": integer, "block_size": integer,
		"available_size": integer, "used_size": integer, "used_for": str, "tags": array, "filesystem": objNull,
		"partition_table_type": strNull, "partitions": array, "firmware_version": strNull,
		"storage_pool": strNull, "numa_node": integer, "resource_uri": str,
	}
	numaSchema    = schema{"index": integer, "cores": array, "memory": integer, "hugepages_set": array}
	gatewaySchema = schema{"gateway_ip": strNull, "link_id": intNull}
)

// maasHardwareKeys are the keys of MAAS's hardware_info (NodeHandler).
var maasHardwareKeys = []string{
	"chassis_serial", "chassis_type", "chassis_vendor", "chassis_version", "cpu_model",
	"mainboard_firmware_date", "mainboard_firmware_vendor", "mainboard_firmware_version", "mainboard_product",
	"mainboard_serial", "mainboard_vendor", "mainboard_version", "system_family", "system_product",
	"system_serial", "system_sku", "system_vendor", "system_version",
}

// checkMachine checks a machine and every object inside it against MAAS's
// field lists.
func checkMachine(t *testing.T, what string, m map[string]any) {
	t.Helper()
	checkFields(t, what, m, machineSchema)
	if t.Failed() {
		return
	}
	checkFields(t, what+" domain", sub(t, m, "domain"), domainSchema)
	checkFields(t, what+" zone", sub(t, m, "zone"), zoneSchema)
	checkFields(t, what+" pool", sub(t, m, "pool"), zoneSchema)
	for _, i := range items(t, m, "interface_set") {
		checkFields(t, what+" interface", i, interfaceSchema)
	}
	if m["boot_interface"] != nil {
		checkFields(t, what+" boot_interface", sub(t, m, "boot_interface"), interfaceSchema)
	}
	for _, set := range []string{"blockdevice_set", "physicalblockdevice_set"} {
		for _, b := range items(t, m, set) {
			checkFields(t, what+" "+set, b, blockSchema)
		}
	}
	if m["boot_disk"] != nil {
		checkFields(t, what+" boot_disk", sub(t, m, "boot_disk"), blockSchema)
	}
	numa := items(t, m, "numanode_set")
	if len(numa) != 1 {
		t.Errorf("%s: numanode_set %v, want node 0 alone", what, numa)
	}
	for _, n := range numa {
		checkFields(t, what+" numa node", n, numaSchema)
	}
	gw := sub(t, m, "default_gateways")
	checkFields(t, what+" default_gateways", gw, schema{"ipv4": object, "ipv6": object})
	for _, fam := range []string{"ipv4", "ipv6"} {
		checkFields(t, what+" default_gateways "+fam, sub(t, gw, fam), gatewaySchema)
	}
	keys := map[string]bool{}
	for k, v := range sub(t, m, "hardware_info") {
		if _, ok := v.(string); !ok {
			t.Errorf("%s: hardware_info %s is %v, not a string", what, k, v)
		}
		keys[k] = true
	}
	for _, k := range maasHardwareKeys {
		if !keys[k] {
			t.Errorf("%s: hardware_info lacks %q", what, k)
		}
	}
	for _, st := range []string{"commissioning", "testing", "cpu_test", "memory_test", "network_test",
		"storage_test", "other_test", "interface_test"} {
		want := scriptStatusName(m[st+"_status"])
		if m[st+"_status_name"] != want {
			t.Errorf("%s: %s_status %v is named %v, MAAS names it %q", what, st, m[st+"_status"], m[st+"_status_name"], want)
		}
	}
}

func scriptStatusName(v any) string {
	names := map[string]string{"0": "Pending", "1": "Running", "2": "Passed", "3": "Failed"}
	if n, ok := names[kindValue(v)]; ok {
		return n
	}
	return "Unknown"
}

func kindValue(v any) string {
	if n, ok := v.(interface{ String() string }); ok {
		return n.String()
	}
	return ""
}

// want fails unless field f of m has the JSON text j.
func wantJSON(t *testing.T, what string, m map[string]any, f, j string) {
	t.Helper()
	got := decodeValue(t, j)
	if !reflect.DeepEqual(m[f], got) {
		t.Errorf("%s: %s is %v, want %s", what, f, m[f], j)
	}
}

func decodeValue(t *testing.T, j string) any {
	t.Helper()
	return decodeObject(t, []byte(`{"v":`+j+`}`))["v"]
}

func TestMachineFieldsNew(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		made := e.addMachine("fresh", "52:54:00:aa:00:01", nil)
		e.must(http.StatusOK, "PUT", "machines/"+made.SystemID+"/", e.admin, url.Values{"cpu_count": {"4"}, "memory": {"2048"}}, nil)
		created := decodeObject(t, e.answer(http.StatusOK, "GET", "machines/"+made.SystemID+"/", e.admin, nil))
		checkMachine(t, "new machine", created)
		// MAAS's values for a machine nothing is known about yet.
		for f, j := range map[string]string{
			"hardware_uuid": "null", "netboot": "true", "cpu_speed": "0", "boot_disk": "null",
			"bios_boot_method": "null", "swap_size": "null", "address_ttl": "null", "hwe_kernel": "null",
			"min_hwe_kernel": `""`, "parent": "null", "last_sync": "null", "next_sync": "null",
			"sync_interval": "null", "current_commissioning_result_id": "null",
			"current_testing_result_id": "null", "current_installation_result_id": "null",
			"commissioning_status": "-1", "commissioning_status_name": `"Unknown"`, "testing_status": "-1",
			"locked": "false", "node_type": "0", "node_type_name": `"Machine"`, "owner_data": "{}",
			"workload_annotations": "{}", "special_filesystems": "[]", "volume_groups": "[]", "raids": "[]",
			"cache_sets": "[]", "bcaches": "[]", "virtualblockdevice_set": "[]", "error_description": `""`,
			"default_gateways": `{"ipv4":{"gateway_ip":null,"link_id":null},"ipv6":{"gateway_ip":null,"link_id":null}}`,
			"numanode_set":     `[{"index":0,"cores":[0,1,2,3],"memory":2048,"hugepages_set":[]}]`,
		} {
			wantJSON(t, "new machine", created, f, j)
		}
		if _, ok := created["constraints_by_type"]; ok {
			t.Errorf("constraints_by_type outside an allocation answer")
		}
		hw := sub(t, created, "hardware_info")
		if len(hw) != 18 {
			t.Errorf("hardware_info has %d keys, MAAS has 18: %v", len(hw), hw)
		}
		for k, v := range hw {
			if v != "Unknown" {
				t.Errorf("hardware_info %s = %v before commissioning", k, v)
			}
		}
		wantJSON(t, "new machine", sub(t, created, "domain"), "is_default", "true")
		wantJSON(t, "new machine", sub(t, created, "domain"), "name", `"maas"`)

		// The list, from the render cache and then again, and a tag's
		// machines have the same shape.
		for i := 0; i < 2; i++ {
			for _, m := range decodeList(t, e.answer(http.StatusOK, "GET", "machines/", e.admin, nil)) {
				checkMachine(t, "listed machine", m)
			}
		}
		e.must(http.StatusOK, "POST", "tags/", e.admin, url.Values{"name": {"fast"}}, nil)
		e.must(http.StatusOK, "POST", "tags/fast/?op=update_nodes", e.admin, url.Values{"add": {made.SystemID}}, nil)
		for _, m := range decodeList(t, e.answer(http.StatusOK, "GET", "tags/fast/", e.admin, url.Values{"op": {"machines"}})) {
			checkMachine(t, "tagged machine", m)
		}
	})
}

// commissioned stores what commissioning finds on a machine, as the
// agent's signal does.
func (e *env) commissioned(id string, status machine.Status, inv *machine.Inventory) {
	e.t.Helper()
	_, err := e.srv.Store.UpdateMachine(context.Background(), id, func(m *machine.Machine) ([]machine.Event, error) {
		m.Status, m.Inventory, m.HardwareUUID = status, inv, "6f2c1f1e-0000-4000-8000-0000000000c1"
		m.CPUCount, m.Memory = inv.CPU.Threads, inv.MemoryMiB
		return nil, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func TestMachineFieldsCommissioned(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		mac := "52:54:00:aa:00:02"
		made := e.addMachine("found", mac, nil)
		inv := testInventory(mac)
		inv.NICs[0].SpeedMbps = 1000
		e.commissioned(made.SystemID, machine.Ready, inv)
		m := decodeObject(t, e.answer(http.StatusOK, "GET", "machines/"+made.SystemID+"/", e.admin, nil))
		checkMachine(t, "commissioned machine", m)
		for f, j := range map[string]string{
			"hardware_uuid": `"6f2c1f1e-0000-4000-8000-0000000000c1"`, "cpu_speed": "2400", "netboot": "true",
			"bios_boot_method": `"pxe"`, "commissioning_status": "2", "commissioning_status_name": `"Passed"`,
			"testing_status": "-1", "testing_status_name": `"Unknown"`,
			"numanode_set": `[{"index":0,"cores":[0,1],"memory":1024,"hugepages_set":[]}]`,
		} {
			wantJSON(t, "commissioned machine", m, f, j)
		}
		hw := sub(t, m, "hardware_info")
		if hw["system_vendor"] != "QEMU" || hw["system_product"] != "Standard PC" || hw["cpu_model"] != "QEMU Virtual CPU" ||
			hw["mainboard_vendor"] != "Unknown" {
			t.Errorf("hardware_info: %v", hw)
		}
		disk := sub(t, m, "boot_disk")
		for f, j := range map[string]string{"name": `"vda"`, "size": "8589934592", "used_for": `"Unused"`,
			"available_size": "8589934592", "used_size": "0", "partitions": "[]", "filesystem": "null"} {
			wantJSON(t, "boot disk", disk, f, j)
		}
		iface := sub(t, m, "boot_interface")
		wantJSON(t, "boot interface", iface, "link_speed", "1000")
		wantJSON(t, "boot interface", iface, "link_connected", "true")

		e.commissioned(made.SystemID, machine.FailedCommissioning, inv)
		m = decodeObject(t, e.answer(http.StatusOK, "GET", "machines/"+made.SystemID+"/", e.admin, nil))
		wantJSON(t, "failed commissioning", m, "commissioning_status", "3")
		wantJSON(t, "failed commissioning", m, "commissioning_status_name", `"Failed"`)

		// A deployed machine boots its disk: netboot is off.
		e.commissioned(made.SystemID, machine.Deployed, inv)
		m = decodeObject(t, e.answer(http.StatusOK, "GET", "machines/"+made.SystemID+"/", e.admin, nil))
		checkMachine(t, "deployed machine", m)
		wantJSON(t, "deployed machine", m, "netboot", "false")
	})
}

func TestMachineFieldsAllocated(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		made := e.addMachine("free", "52:54:00:aa:00:03", nil)
		e.commissioned(made.SystemID, machine.Ready, testInventory("52:54:00:aa:00:03"))
		m := decodeObject(t, e.answer(http.StatusOK, "POST", "machines/?op=allocate", e.user, nil))
		checkMachine(t, "allocated machine", m)
		if kindOf(m["constraints_by_type"]) != object {
			t.Errorf("allocation answer: constraints_by_type is %v", m["constraints_by_type"])
		}
		wantJSON(t, "allocated machine", m, "owner", `"alice"`)
		if n := len(machineSchema) + 1; n != 80 {
			t.Errorf("the schema lists %d machine fields, MAAS has 80", n)
		}
	})
}

// TestMachineFieldsStayMAAS checks that every field Anvil renders beyond
// MAAS's is one of Anvil's own, so a renamed MAAS field cannot hide as an
// extra.
func TestMachineFieldsStayMAAS(t *testing.T) {
	e := start(t, "")
	made := e.addMachine("extra", "52:54:00:aa:00:04", nil)
	m := decodeObject(t, e.answer(http.StatusOK, "GET", "machines/"+made.SystemID+"/", e.admin, nil))
	own := map[string]bool{"status_expires": true, "drift_policy": true, "power_drift": true,
		"power_drift_reason": true, "power_state_observed": true, "power_error": true}
	var extra []string
	for f := range m {
		if _, ok := machineSchema[f]; !ok && !own[f] {
			extra = append(extra, f)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("fields neither MAAS's nor Anvil's: %v", extra)
	}
}
