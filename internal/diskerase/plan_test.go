package diskerase

import "testing"

func TestModes(t *testing.T) {
	for _, c := range []struct {
		in       string
		secure   bool
		fallback Method
	}{
		{"", false, MethodQuick},
		{"quick", false, MethodQuick},
		{"full", false, MethodZero},
		{"secure", true, MethodZero},
		{"secure-quick", true, MethodQuick},
	} {
		m, err := ParseMode(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if m.WantsSecure() != c.secure || m.Fallback() != c.fallback {
			t.Errorf("%q: secure %v fallback %q", c.in, m.WantsSecure(), m.Fallback())
		}
	}
	if _, err := ParseMode("shred"); err == nil {
		t.Error("unknown mode taken")
	}
}

func TestKinds(t *testing.T) {
	for name, kind := range map[string]Kind{"nvme0n1": KindNVMe, "sda": KindATA, "vda": KindNone, "mmcblk0": KindNone} {
		if KindOf(name) != kind {
			t.Errorf("%s: kind %d, want %d", name, KindOf(name), kind)
		}
		if (NoSecureErase(name) == "") != (kind != KindNone) {
			t.Errorf("%s: %q", name, NoSecureErase(name))
		}
	}
	got := Summary([]Result{{Disk: "nvme0n1", Method: MethodNVMeUser}, {Disk: "vda", Method: MethodZero, Why: NoSecureErase("vda")}})
	if want := "nvme0n1: secure erase (NVMe Format, user data); vda: zeroed every block (no secure erase: virtio disks have no secure erase)"; got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
}
