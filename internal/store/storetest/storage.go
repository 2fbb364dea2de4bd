package storetest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/storage"
	"github.com/anvilmetal/anvil/internal/store"
)

// testStorageConfig: a machine's storage configuration is stored whole
// with the machine, read back equal, and concurrent edits (each a read,
// an edit and a write under the row's version) never lose one.
func testStorageConfig(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := newMachine("node1")
	c, err := storage.ApplyLayout(storage.LayoutLVM, storage.Machine{Disks: []storage.Disk{{Name: "sda", Size: 100 << 30, Tags: []string{"ssd"}}}, Firmware: storage.UEFI}, storage.LayoutParams{})
	if err != nil {
		t.Fatal(err)
	}
	c = c.WithIDs()
	m.StorageConfig = &c
	create(t, s, m)
	got := get(t, s, m.SystemID)
	if got.StorageConfig == nil || !reflect.DeepEqual(*got.StorageConfig, c) {
		t.Fatalf("stored %+v, read %+v", c, got.StorageConfig)
	}
	const workers = 8
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			_, err := s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
				next, err := storage.TagDisk(*m.StorageConfig, "sda", fmt.Sprintf("t%d", i), true)
				m.StorageConfig = &next
				return nil, err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got = get(t, s, m.SystemID)
	if n := len(got.StorageConfig.Disks[0].Tags); n != workers+1 {
		t.Fatalf("tags %v: %d edits of %d kept", got.StorageConfig.Disks[0].Tags, n-1, workers)
	}
	if _, err := s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.StorageConfig = nil
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, m.SystemID); got.StorageConfig != nil {
		t.Fatalf("a removed configuration reads back as %+v", got.StorageConfig)
	}
}
