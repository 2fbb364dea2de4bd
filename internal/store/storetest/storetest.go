// Package storetest is the test suite every store.Store implementation must
// pass. An implementation's test calls Run with a function that opens a
// fresh, empty store and registers its Close with t.Cleanup.
package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// Run runs every test, each against a store of its own.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"CreateAndGet", testCreateAndGet},
		{"CreateDefaults", testCreateDefaults},
		{"CreateUnknownZoneOrPool", testCreateUnknownZoneOrPool},
		{"CreateConflicts", testCreateConflicts},
		{"CreateConcurrentConflict", testCreateConcurrentConflict},
		{"CreateWithTags", testCreateWithTags},
		{"GetNotFound", testGetNotFound},
		{"ListFilters", testListFilters},
		{"ListVisibility", testListVisibility},
		{"ListPowerParamsAndLimit", testListPowerParamsAndLimit},
		{"ListMany", testListMany},
		{"ListMachineVersions", testListMachineVersions},
		{"PowerQueue", testPowerQueue},
		{"PowerLeases", testPowerLeases},
		{"PowerClaimsConcurrent", testPowerClaimsConcurrent},
		{"PowerClaimWhere", testPowerClaimWhere},
		{"RackPower", testRackPower},
		{"RackEnrolment", testRackEnrolment},
		{"RackGrant", testRackGrant},
		{"Leases", testLeases},
		{"Subnets", testSubnets},
		{"NetworkDefaults", testNetworkDefaults},
		{"FabricsVLANsSpaces", testFabricsVLANsSpaces},
		{"StaticRoutes", testStaticRoutes},
		{"InterfacesAndLinks", testInterfacesAndLinks},
		{"WriteInterfacesAtomic", testWriteInterfacesAtomic},
		{"InterfaceWritesBumpVersion", testInterfaceWritesBumpVersion},
		{"Devices", testDevices},
		{"AllocateConcurrent", testAllocateConcurrent},
		{"Discoveries", testDiscoveries},
		{"Sightings", testSightings},
		{"HeldBoots", testHeldBoots},
		{"Update", testUpdate},
		{"UpdateUpdatedTime", testUpdateUpdatedTime},
		{"UpdateFnErrorRollsBack", testUpdateFnErrorRollsBack},
		{"UpdateMachinePower", testUpdateMachinePower},
		{"FinishPowerWith", testFinishPowerWith},
		{"UpdateConflictRollsBack", testUpdateConflictRollsBack},
		{"UpdateInterfaces", testUpdateInterfaces},
		{"UpdateZoneAndPool", testUpdateZoneAndPool},
		{"UpdateConcurrent", testUpdateConcurrent},
		{"StorageConfig", testStorageConfig},
		{"Delete", testDelete},
		{"ExpiredAndCount", testExpiredAndCount},
		{"Users", testUsers},
		{"Tokens", testTokens},
		{"NamedTokens", testNamedTokens},
		{"Racks", testRacks},
		{"RackLeases", testRackLeases},
		{"ImportSSHKeys", testImportSSHKeys},
		{"Sessions", testSessions},
		{"Config", testConfig},
		{"Regions", testRegions},
		{"Zones", testZones},
		{"Pools", testPools},
		{"Tags", testTags},
		{"DNS", testDNS},
		{"AddDNSDataHoldsName", testAddDNSDataHoldsName},
		{"TagMachines", testTagMachines},
		{"AppendAndQueryEvents", testAppendAndQueryEvents},
		{"EventFilters", testEventFilters},
		{"EventLimits", testEventLimits},
		{"TenThousandMachines", testTenThousandMachines},
		{"AgentFields", testAgentFields},
		{"MachineTokens", testMachineTokens},
		{"Results", testResults},
		{"Scripts", testScripts},
		{"ScriptSets", testScriptSets},
		{"ScriptSummaryKept", testScriptSummaryKept},
		{"BootResources", testBootResources},
		{"BootResourcesConcurrent", testBootResourcesConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

// Secret is the power password every test machine carries; dialect tests
// check that it does not appear in the database file or column.
const Secret = "pa55-w0rd-never-in-plaintext"

// mac returns a distinct MAC for each i.
func mac(i int) string {
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", byte(i>>16), byte(i>>8), byte(i))
}

// newMachine returns a machine with every field set that CreateMachine
// stores as given.
func newMachine(host string, macs ...string) *machine.Machine {
	m := &machine.Machine{
		Hostname: host, Domain: "maas", Architecture: "amd64/generic", Description: "rack 4",
		Status: machine.New, StatusMessage: "added", PreviousStatus: machine.New,
		PowerType:   "ipmi",
		PowerParams: map[string]string{"power_address": "10.0.0.9", "power_user": "admin", "power_pass": Secret},
		PowerState:  machine.PowerUnknown, CPUCount: 4, Memory: 8192, Storage: 500000.5,
		HardwareUUID: "6f2c1f1e-0000-4000-8000-000000000001", Netboot: true,
	}
	for i, a := range macs {
		m.Interfaces = append(m.Interfaces, machine.Interface{Name: fmt.Sprintf("eth%d", i), MAC: a, Boot: i == 0})
	}
	return m
}

// ts is a fixed time at microsecond resolution, which every store keeps.
func ts(minute int) time.Time {
	return time.Date(2025, 3, 14, 15, minute, 26, 535897000, time.UTC)
}

func create(t *testing.T, s store.Store, m *machine.Machine, events ...machine.Event) *machine.Machine {
	t.Helper()
	if err := s.CreateMachine(t.Context(), m, events); err != nil {
		t.Fatalf("CreateMachine(%s): %v", m.Hostname, err)
	}
	return m
}

func get(t *testing.T, s store.Store, id string) machine.Machine {
	t.Helper()
	m, err := s.GetMachine(t.Context(), id)
	if err != nil {
		t.Fatalf("GetMachine(%s): %v", id, err)
	}
	return m
}

func list(t *testing.T, s store.Store, f store.MachineFilter) []machine.Machine {
	t.Helper()
	ms, err := s.ListMachines(t.Context(), f)
	if err != nil {
		t.Fatalf("ListMachines(%+v): %v", f, err)
	}
	return ms
}

func hostnames(ms []machine.Machine) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.Hostname)
	}
	return out
}

// canon makes empty and nil slices and maps compare equal.
func canon(m machine.Machine) machine.Machine {
	m = m.Clone()
	if len(m.Interfaces) == 0 {
		m.Interfaces = nil
	}
	if len(m.Tags) == 0 {
		m.Tags = nil
	}
	if len(m.PowerParams) == 0 {
		m.PowerParams = nil
	}
	return m
}

func sameMachine(t *testing.T, got, want machine.Machine) {
	t.Helper()
	if g, w := canon(got), canon(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("machine differs\n got: %+v\nwant: %+v", g, w)
	}
}

func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}

func wantErrIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want one wrapping %v", err, target)
	}
}

// wantConflict checks err is a *store.ConflictError naming what and holder.
func wantConflict(t *testing.T, err error, what, holder string) {
	t.Helper()
	var ce *store.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v, want a *store.ConflictError", err)
	}
	if ce.What != what || ce.Holder != holder {
		t.Fatalf("conflict = {What: %q, Holder: %q}, want {%q, %q}", ce.What, ce.Holder, what, holder)
	}
	wantErrIs(t, err, store.ErrConflict)
}

func countEvents(t *testing.T, s store.Store) int {
	t.Helper()
	evs, err := s.QueryEvents(t.Context(), store.EventFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

func countMachines(t *testing.T, s store.Store) int {
	t.Helper()
	n, err := s.CountMachines(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
