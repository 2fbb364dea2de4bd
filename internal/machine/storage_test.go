package machine

import (
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/storage"
)

func TestStorageAfterCommissioning(t *testing.T) {
	inv := Inventory{Firmware: "uefi", Disks: []Disk{{Name: "sda", Serial: "A", Size: 20 << 30}}}
	flat, _ := StorageAfterCommissioning(nil, inv, "flat")
	bigger := Inventory{Firmware: "uefi", Disks: []Disk{{Name: "sda", Serial: "B", Size: 40 << 30}}}
	for _, tc := range []struct {
		name   string
		old    *storage.Config
		inv    Inventory
		layout string
		want   string // the layout kept or made; "" for none
		event  string
	}{
		{"first commissioning", nil, inv, "flat", "flat", "the flat storage layout was applied"},
		{"lvm by setting", nil, inv, "lvm", "lvm", "the lvm storage layout was applied"},
		{"same disks keep the layout", flat, inv, "lvm", "flat", ""},
		{"new disks reset it", flat, bigger, "lvm", "lvm", "The disks changed, so the storage configuration was reset; the lvm storage layout was applied"},
		{"does not fit", nil, Inventory{Disks: []Disk{{Name: "sda", Size: 1 << 30}}}, "flat", "", "the flat storage layout was not applied: "},
		{"a layout Anvil does not compute", nil, inv, "vmfs6", "", "the vmfs6 storage layout was not applied"},
		{"bcache without a cache falls back", nil, inv, "bcache", "flat", "the flat storage layout was applied"},
		{"no disks", nil, Inventory{}, "flat", "", ""},
	} {
		got, ev := StorageAfterCommissioning(tc.old, tc.inv, tc.layout)
		layout := ""
		if got != nil {
			layout = got.Layout
			if got.Disks[0].ID != 1 {
				t.Errorf("%s: disk id %d, want 1", tc.name, got.Disks[0].ID)
			}
		}
		if layout != tc.want || !strings.HasPrefix(ev, tc.event) || (tc.event == "" && ev != "") {
			t.Errorf("%s: layout %q, event %q; want %q, %q", tc.name, layout, ev, tc.want, tc.event)
		}
	}
}

func TestCheckStorageEdit(t *testing.T) {
	admin, alice := Actor{Name: "admin", Admin: true}, Actor{Name: "alice"}
	e := StorageEdit{Allocated: true, NotReady: "not ready", Forbidden: "no rights"}
	readyOnly := StorageEdit{NotReady: "not ready", Forbidden: "no rights"}
	for _, tc := range []struct {
		name string
		a    Actor
		m    Machine
		e    StorageEdit
		want string
	}{
		{"admin on Ready", admin, Machine{Status: Ready}, e, ""},
		{"user on a Ready machine", alice, Machine{Status: Ready}, e, "no rights"},
		{"owner on Allocated", alice, Machine{Status: Allocated, Owner: "alice"}, e, ""},
		{"owner on Allocated, Ready only", alice, Machine{Status: Allocated, Owner: "alice"}, readyOnly, "not ready"},
		{"admin on Deployed", admin, Machine{Status: Deployed, Owner: "alice"}, e, "not ready"},
		{"locked", admin, Machine{Status: Ready, Locked: true}, e, "not allowed to format this machine: the machine is locked; unlock it first"},
	} {
		err := CheckStorageEdit(tc.a, &tc.m, "format", tc.e)
		if got := errText(err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
