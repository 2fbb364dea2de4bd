package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

func testAgentFields(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := newMachine("node1", mac(1))
	m.BMCIdentity, m.EnrolSecret, m.WrongBoots = "ipmi|192.0.2.21|623|", "enrol-1", 2
	m.UserData = []byte("#cloud-config\n\x00binary\xff")
	m.Inventory = &machine.Inventory{
		CPU: machine.CPU{Model: "QEMU Virtual CPU", Cores: 2, Threads: 4, MHz: 2400}, MemoryMiB: 512,
		Disks:  []machine.Disk{{Name: "vda", Size: 64 << 20, Rotational: true}},
		NICs:   []machine.NIC{{Name: "eth0", MAC: mac(1), Driver: "virtio_net", Link: true}},
		SMBIOS: machine.SMBIOS{Vendor: "QEMU", UUID: m.HardwareUUID},
		BMC:    &machine.BMCInfo{Type: "ipmi", Address: "192.0.2.21", MAC: "02:00:00:00:00:21"},
	}
	create(t, s, m)
	got := get(t, s, m.SystemID)
	if got.BMCIdentity != m.BMCIdentity || got.EnrolSecret != "enrol-1" || got.WrongBoots != 2 || string(got.UserData) != string(m.UserData) {
		t.Fatalf("agent fields = %q %q %d", got.BMCIdentity, got.EnrolSecret, got.WrongBoots)
	}
	if !reflect.DeepEqual(got.Inventory, m.Inventory) {
		t.Fatalf("inventory = %+v, want %+v", got.Inventory, m.Inventory)
	}

	// A second machine may not claim the same BMC system, on create or
	// on update; the error names the holder.
	other := newMachine("node2", mac(2))
	other.BMCIdentity = m.BMCIdentity
	var ce *store.ConflictError
	if err := s.CreateMachine(ctx, other, nil); !errors.As(err, &ce) || ce.Holder != m.SystemID || ce.HolderName != m.Hostname {
		t.Fatalf("create with a taken BMC: %v", err)
	}
	other.BMCIdentity = "ipmi|192.0.2.22|623|"
	create(t, s, other)
	_, err := s.UpdateMachine(ctx, other.SystemID, func(x *machine.Machine) ([]machine.Event, error) {
		x.BMCIdentity = m.BMCIdentity
		return nil, nil
	})
	if !errors.As(err, &ce) || ce.Holder != m.SystemID {
		t.Fatalf("update to a taken BMC: %v", err)
	}

	if ms := list(t, s, store.MachineFilter{BMCHost: "192.0.2.21"}); len(ms) != 1 || ms[0].SystemID != m.SystemID {
		t.Fatalf("by BMC host: %v", hostnames(ms))
	}
	if ms := list(t, s, store.MachineFilter{UUIDs: []string{m.HardwareUUID}}); len(ms) != 2 {
		t.Fatalf("by UUID: %v", hostnames(ms))
	}
	if ms := list(t, s, store.MachineFilter{UUIDs: []string{"nope"}}); len(ms) != 0 {
		t.Fatalf("by unknown UUID: %v", hostnames(ms))
	}
}

func testMachineTokens(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := create(t, s, newMachine("node1", mac(1)))
	tok, err := s.CreateMachineToken(ctx, m.SystemID, machine.Commissioning)
	if err != nil {
		t.Fatal(err)
	}
	id, st, err := s.LookupMachineToken(ctx, tok.ConsumerKey, tok.TokenKey, tok.Secret)
	if err != nil || id != m.SystemID || st != machine.Commissioning {
		t.Fatalf("lookup = %s %s %v", id, st, err)
	}
	for _, bad := range [][3]string{
		{tok.ConsumerKey, tok.TokenKey, tok.Secret + "x"},
		{"other", tok.TokenKey, tok.Secret},
		{tok.ConsumerKey, "nope", tok.Secret},
	} {
		if _, _, err := s.LookupMachineToken(ctx, bad[0], bad[1], bad[2]); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("lookup %v: %v", bad, err)
		}
	}
	// MachineToken shows the keys, never the secret.
	if got, st, err := s.MachineToken(ctx, m.SystemID); err != nil || got.TokenKey != tok.TokenKey || got.ConsumerKey != tok.ConsumerKey ||
		got.Secret != "" || st != machine.Commissioning {
		t.Fatalf("MachineToken = %+v %s %v", got, st, err)
	}
	// A new token revokes the old one.
	tok2, err := s.CreateMachineToken(ctx, m.SystemID, machine.Deploying)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.LookupMachineToken(ctx, tok.ConsumerKey, tok.TokenKey, tok.Secret); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("old token still valid: %v", err)
	}
	if got, _, err := s.MachineToken(ctx, m.SystemID); err != nil || got.TokenKey != tok2.TokenKey {
		t.Fatalf("MachineToken after a new one = %+v %v", got, err)
	}
	if err := s.DeleteMachineTokens(ctx, m.SystemID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.LookupMachineToken(ctx, tok2.ConsumerKey, tok2.TokenKey, tok2.Secret); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoked token still valid: %v", err)
	}
	if _, _, err := s.MachineToken(ctx, m.SystemID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("MachineToken after revoking: %v", err)
	}
	if _, err := s.CreateMachineToken(ctx, "nosuch", machine.Commissioning); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("token for an unknown machine: %v", err)
	}
	// Tokens go with their machine.
	tok3, _ := s.CreateMachineToken(ctx, m.SystemID, machine.Commissioning)
	if err := s.DeleteMachine(ctx, m.SystemID, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.LookupMachineToken(ctx, tok3.ConsumerKey, tok3.TokenKey, tok3.Secret); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("token of a deleted machine: %v", err)
	}
}

func testResults(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := create(t, s, newMachine("node1", mac(1)))
	if err := s.PutResults(ctx, m.SystemID, map[string][]byte{"cpuinfo": []byte("a"), "meminfo": []byte("b")}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutResults(ctx, m.SystemID, map[string][]byte{"cpuinfo": []byte("c")}); err != nil {
		t.Fatal(err)
	}
	rs, err := s.ListResults(ctx, m.SystemID)
	if err != nil || len(rs) != 2 || rs[0].Name != "cpuinfo" || string(rs[0].Data) != "c" || string(rs[1].Data) != "b" || rs[0].Created.IsZero() {
		t.Fatalf("results = %+v, %v", rs, err)
	}
	if err := s.PutResults(ctx, "nosuch", map[string][]byte{"x": nil}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("results for an unknown machine: %v", err)
	}

	// With an update: both or neither.
	refused := errors.New("refused")
	_, err = s.UpdateMachineWithResults(ctx, m.SystemID, map[string][]byte{"disks": []byte("d")}, func(m *machine.Machine) ([]machine.Event, error) {
		m.StatusMessage = "never stored"
		return nil, refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("a refused update: %v", err)
	}
	if rs, _ := s.ListResults(ctx, m.SystemID); len(rs) != 2 {
		t.Fatalf("a refused update stored its results: %+v", rs)
	}
	got, err := s.UpdateMachineWithResults(ctx, m.SystemID, map[string][]byte{"disks": []byte("d"), "cpuinfo": []byte("e")}, func(m *machine.Machine) ([]machine.Event, error) {
		m.StatusMessage = "inventory taken"
		return nil, nil
	})
	if err != nil || got.StatusMessage != "inventory taken" {
		t.Fatalf("update with results: %+v, %v", got, err)
	}
	rs, _ = s.ListResults(ctx, m.SystemID)
	if len(rs) != 3 || string(rs[0].Data) != "e" || rs[1].Name != "disks" {
		t.Fatalf("results after the update = %+v", rs)
	}
	if _, err := s.UpdateMachineWithResults(ctx, "nosuch", map[string][]byte{"x": nil}, func(*machine.Machine) ([]machine.Event, error) { return nil, nil }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update with results of an unknown machine: %v", err)
	}
}
