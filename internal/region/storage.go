package region

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/settings"
	"github.com/anvilmetal/anvil/internal/storage"
	"github.com/anvilmetal/anvil/internal/store"
)

// rootfsTypes are the image file types the installer lays out per the
// machine's storage configuration; disk images carry their own layout.
var rootfsTypes = []string{"tgz", "tbz", "txz"}

// firmwareOf is how m boots, as commissioning saw it.
func firmwareOf(m *machine.Machine) storage.Firmware {
	if m.Inventory == nil {
		return storage.BIOS
	}
	return m.Inventory.StorageFirmware()
}

// StorageOf is m's configuration to show and edit: the stored one, else
// the bare disks commissioning found (nothing on them).
func StorageOf(m *machine.Machine) storage.Config {
	if m.StorageConfig != nil {
		return *m.StorageConfig
	}
	var c storage.Config
	if m.Inventory != nil {
		c = c.Relayout(storage.Config{Disks: machine.StorageDisks(*m.Inventory)})
		c.BootDisk = storage.DefaultBootDisk(c.Disks)
	}
	return c
}

// applyCommissionedStorage sets m's storage after commissioning reported
// inv (see machine.StorageAfterCommissioning); it returns the event to
// record, if any.
func (s *Service) applyCommissionedStorage(m *machine.Machine, inv machine.Inventory, layout string) []machine.Event {
	c, text := machine.StorageAfterCommissioning(m.StorageConfig, inv, layout)
	m.StorageConfig = withUUIDs(c)
	if text == "" {
		return nil
	}
	level := machine.LevelInfo
	if c == nil {
		level = machine.LevelWarning
	}
	return []machine.Event{{Type: "Storage", Level: level, Created: s.Now(), Description: text}}
}

// storageLayoutSetting is default_storage_layout in effect.
func (s *Service) storageLayoutSetting(ctx context.Context) string {
	v, err := s.Setting(ctx, settings.DefaultStorageLayout)
	s.logErr(err, "read default_storage_layout", "")
	name, _ := v.(string)
	return name
}

// EditStorage applies one edit to a machine's storage configuration in
// the machine's own transaction, after the status and permission checks
// of rule: concurrent edits are serialised by the row's version, and a
// refused edit stores nothing.
func (s *Service) EditStorage(ctx context.Context, actor machine.Actor, systemID string, what machine.Action, rule machine.StorageEdit,
	edit func(c storage.Config, fw storage.Firmware) (storage.Config, error)) (machine.Machine, error) {
	return s.update(ctx, systemID, func(m *machine.Machine) ([]machine.Event, error) {
		if !machine.CanView(actor, m) {
			return nil, fmt.Errorf("machine %s: %w", systemID, store.ErrNotFound)
		}
		if err := machine.CheckStorageEdit(actor, m, what, rule); err != nil {
			return nil, err
		}
		c, err := edit(StorageOf(m), firmwareOf(m))
		if err != nil {
			return nil, err
		}
		c = c.WithIDs()
		m.StorageConfig = withUUIDs(&c)
		return nil, nil
	})
}

// LayoutRefused is set_storage_layout's refusal in MAAS's words (400).
type LayoutRefused struct{ Msg string }

func (e *LayoutRefused) Error() string { return e.Msg }

// SetStorageLayout is MAAS's op=set_storage_layout: the layout replaces
// the machine's whole configuration (disks keep their ids).
func (s *Service) SetStorageLayout(ctx context.Context, actor machine.Actor, systemID, layout string, p storage.LayoutParams) (machine.Machine, error) {
	rule := machine.StorageEdit{
		NotReady:  "Cannot change the storage layout on a machine that is not Ready.",
		Forbidden: "You do not have permission to change the storage layout of this machine.",
	}
	return s.EditStorage(ctx, actor, systemID, "set_storage_layout", rule, func(c storage.Config, fw storage.Firmware) (storage.Config, error) {
		if layout == "" {
			// After the machine and its status, as MAAS checks.
			e := storage.FieldErrors{}
			e.Add("storage_layout", "This field is required.")
			return c, e
		}
		next, err := storage.ApplyLayout(layout, storage.Machine{Disks: c.Disks, BootDisk: c.BootDisk, Firmware: fw}, p)
		if err == nil {
			return c.Relayout(next), nil
		}
		fe, ok := err.(storage.FieldErrors)
		switch {
		case !ok || len(fe["storage_layout"]) > 0:
			return c, err
		case slices.Contains(fe["__all__"], "Node doesn't have a boot partition defined.") || len(c.Disks) == 0:
			return c, &LayoutRefused{"Machine is missing a boot disk; no storage layout can be applied."}
		}
		return c, &LayoutRefused{fmt.Sprintf("Failed to configure storage layout '%s': %s", layout, err)}
	})
}

// deployFiletype is the file type of the image a deploy of systemID
// would take ("" when it cannot tell: the step's own refusal answers).
func (s *Service) deployFiletype(ctx context.Context, actor machine.Actor, systemID string, in machine.Input) string {
	m, err := s.Store.GetMachine(ctx, systemID)
	if err != nil {
		return ""
	}
	in.Actor, in.Now = actor, s.Now()
	o, err := machine.Step(m, in, s.lifecycle(ctx))
	if err != nil {
		return ""
	}
	f, err := s.imageFor(ctx, o.Machine)
	if err != nil {
		return ""
	}
	return f.Filetype
}

// StorageRefused is a deploy refused for its storage configuration, as
// MAAS's {"storage": [issues]} (400).
type StorageRefused struct{ Issues []string }

func (e *StorageRefused) Error() string { return "storage: " + strings.Join(e.Issues, "; ") }

// prepareDeployStorage runs in a deploy's transaction: for a root
// filesystem image the stored configuration must boot with the machine's
// firmware, and it keeps the UUIDs its filesystems were made with (any
// still missing one get it now), so that the fstab the installer writes
// and the API agree. Disk images carry their own
// layout; a machine without a configuration keeps the one-partition path.
func prepareDeployStorage(m *machine.Machine, filetype string) error {
	if !slices.Contains(rootfsTypes, filetype) || m.StorageConfig == nil {
		return nil
	}
	if err := storage.Validate(*m.StorageConfig, firmwareOf(m)); err != nil {
		if r, ok := err.(*storage.Refused); ok {
			return &StorageRefused{Issues: r.Reasons}
		}
		return err
	}
	m.StorageConfig = withUUIDs(m.StorageConfig)
	return nil
}

// withUUIDs is c with a UUID for each of its objects that lacks one (nil
// for nil). Every configuration the region stores goes through it, so
// an object has its UUID, as in MAAS, from when it is made.
func withUUIDs(c *storage.Config) *storage.Config {
	if c == nil {
		return nil
	}
	u := c.WithAllUUIDs(storage.RandomUUID)
	return &u
}

// taskStorage is the configuration a deploy's task carries: the stored
// one for a root filesystem image, nil otherwise.
func taskStorage(m machine.Machine, filetype string) *storage.Config {
	if !slices.Contains(rootfsTypes, filetype) || m.StorageConfig == nil {
		return nil
	}
	c := m.StorageConfig.Clone()
	return &c
}

// RestoreStorage is MAAS's restore_storage_configuration: the machine's
// storage goes back to what commissioning made of it, the
// default_storage_layout over the disks it found (a layout that does not
// fit leaves none). The checks are machine.CheckRestore's.
func (s *Service) RestoreStorage(ctx context.Context, actor machine.Actor, systemID string, what machine.Restore) (machine.Machine, error) {
	layout := s.storageLayoutSetting(ctx)
	return s.update(ctx, systemID, func(m *machine.Machine) ([]machine.Event, error) {
		if !machine.CanView(actor, m) {
			return nil, fmt.Errorf("machine %s: %w", systemID, store.ErrNotFound)
		}
		if err := machine.CheckRestore(actor, m, what); err != nil {
			return nil, err
		}
		if m.Inventory == nil {
			return nil, nil
		}
		old := StorageOf(m)
		c, text := machine.LayStorage(&old, *m.Inventory, layout)
		m.StorageConfig = withUUIDs(c)
		if text == "" {
			return nil, nil
		}
		return []machine.Event{{Type: "Storage", Level: machine.LevelInfo, Created: s.Now(), Description: "Storage configuration restored: " + text}}, nil
	})
}
