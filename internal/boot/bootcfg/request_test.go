package bootcfg

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const mac = "52:54:00:ab:cd:ef"
	tests := []struct {
		in   string
		want Request
	}{
		// iPXE
		{"ipxe.cfg", Request{Kind: IPXE, Arch: "amd64", Default: true, Path: "ipxe.cfg"}},
		{"/ipxe.cfg-52:54:00:AB:cd:EF", Request{Kind: IPXE, MAC: mac, Path: "ipxe.cfg-52:54:00:AB:cd:EF"}},
		{"ipxe.cfg-52-54-00-ab-cd-ef", Request{Kind: IPXE, MAC: mac, Path: "ipxe.cfg-52-54-00-ab-cd-ef"}},
		{"ipxe.cfg-default", Request{Kind: IPXE, Arch: "amd64", Default: true, Path: "ipxe.cfg-default"}},
		{"ipxe.cfg-default-amd64", Request{Kind: IPXE, Arch: "amd64", Default: true, Path: "ipxe.cfg-default-amd64"}},
		{"ipxe.cfg-default-arm64", Request{Kind: IPXE, Arch: "arm64", Default: true, Path: "ipxe.cfg-default-arm64"}},
		{"ipxe.cfg-default-x86_64", Request{Kind: IPXE, Arch: "amd64", Default: true, Path: "ipxe.cfg-default-x86_64"}},
		{"ipxe.cfg-default-i386", Request{Kind: IPXE, Arch: "i386", Default: true, Path: "ipxe.cfg-default-i386"}},
		{"ipxe.cfg-default-amd64-generic", Request{Kind: IPXE, Arch: "amd64", Subarch: "generic", Default: true, Path: "ipxe.cfg-default-amd64-generic"}},
		// GRUB
		{"grub/grub.cfg", Request{Kind: GRUB, Top: true, Path: "grub/grub.cfg"}},
		{"/grub/grub.cfg-52:54:00:ab:cd:ef", Request{Kind: GRUB, MAC: mac, Path: "grub/grub.cfg-52:54:00:ab:cd:ef"}},
		{"grub/grub.cfg-01-52-54-00-ab-cd-ef", Request{Kind: GRUB, MAC: mac, Path: "grub/grub.cfg-01-52-54-00-ab-cd-ef"}},
		{"grub/grub.cfg-C0A8010A", Request{Kind: GRUB, HexIP: "C0A8010A", Path: "grub/grub.cfg-C0A8010A"}},
		{"grub/grub.cfg-default-x86_64", Request{Kind: GRUB, Arch: "amd64", Default: true, Path: "grub/grub.cfg-default-x86_64"}},
		{"grub/grub.cfg-default-amd64", Request{Kind: GRUB, Arch: "amd64", Default: true, Path: "grub/grub.cfg-default-amd64"}},
		{"grub/grub.cfg-default-arm64", Request{Kind: GRUB, Arch: "arm64", Default: true, Path: "grub/grub.cfg-default-arm64"}},
		{"grub/grub.cfg-default-aarch64", Request{Kind: GRUB, Arch: "arm64", Default: true, Path: "grub/grub.cfg-default-aarch64"}},
		{"grub/grub.cfg-default-ppc64le", Request{Kind: GRUB, Arch: "ppc64el", Default: true, Path: "grub/grub.cfg-default-ppc64le"}},
		// PXELINUX
		{"pxelinux.cfg/564D1F2A-0B3C-4D5E-8F90-A1B2C3D4E5F6", Request{Kind: PXELINUX, UUID: "564d1f2a-0b3c-4d5e-8f90-a1b2c3d4e5f6", Path: "pxelinux.cfg/564D1F2A-0B3C-4D5E-8F90-A1B2C3D4E5F6"}},
		{"pxelinux.cfg/01-52-54-00-ab-cd-ef", Request{Kind: PXELINUX, MAC: mac, Path: "pxelinux.cfg/01-52-54-00-ab-cd-ef"}},
		{"pxelinux.cfg/default", Request{Kind: PXELINUX, Arch: "amd64", Default: true, Path: "pxelinux.cfg/default"}},
		{"pxelinux.cfg/default-arm64", Request{Kind: PXELINUX, Arch: "arm64", Default: true, Path: "pxelinux.cfg/default-arm64"}},
		{"pxelinux.cfg/default-arm64-xgene-uboot-mustang", Request{Kind: PXELINUX, Arch: "arm64", Subarch: "xgene-uboot-mustang", Default: true, Path: "pxelinux.cfg/default-arm64-xgene-uboot-mustang"}},
		{"pxelinux.cfg/default.amd64", Request{Kind: PXELINUX, Arch: "amd64", Default: true, Path: "pxelinux.cfg/default.amd64"}},
		{"pxelinux.cfg/C000025B", Request{Kind: PXELINUX, HexIP: "C000025B", Path: "pxelinux.cfg/C000025B"}},
		{"pxelinux.cfg/c00002", Request{Kind: PXELINUX, HexIP: "C00002", Path: "pxelinux.cfg/c00002"}},
		{"pxelinux.cfg/C", Request{Kind: PXELINUX, HexIP: "C", Path: "pxelinux.cfg/C"}},
		// Backslashes and doubled slashes normalised.
		{`\pxelinux.cfg\default`, Request{Kind: PXELINUX, Arch: "amd64", Default: true, Path: "pxelinux.cfg/default"}},
		{"//grub//grub.cfg", Request{Kind: GRUB, Top: true, Path: "grub/grub.cfg"}},
		// Files.
		{"pxelinux.0", Request{Kind: File, Path: "pxelinux.0"}},
		{"/bootx64.efi", Request{Kind: File, Path: "bootx64.efi"}},
		{"grub/x86_64-efi/command.lst", Request{Kind: File, Path: "grub/x86_64-efi/command.lst"}},
		{"images/ubuntu/amd64/ga-24.04/noble/stable/boot-kernel", Request{Kind: File, Path: "images/ubuntu/amd64/ga-24.04/noble/stable/boot-kernel"}},
		// Config-looking names that are not a form any loader asks for are
		// plain files (and so not found), not configs.
		{"pxelinux.cfg/01-52:54:00:ab:cd:ef", Request{Kind: File, Path: "pxelinux.cfg/01-52:54:00:ab:cd:ef"}},
		{"pxelinux.cfg/06-52-54-00-ab-cd-ef", Request{Kind: File, Path: "pxelinux.cfg/06-52-54-00-ab-cd-ef"}},
		{"pxelinux.cfg/C000025B00", Request{Kind: File, Path: "pxelinux.cfg/C000025B00"}},
		{"ipxe.cfg-52:54:00:ab:cd", Request{Kind: File, Path: "ipxe.cfg-52:54:00:ab:cd"}},
		{"ipxe.cfg-52:54-00:ab:cd:ef", Request{Kind: File, Path: "ipxe.cfg-52:54-00:ab:cd:ef"}},
		{"ipxe.cfg-default-", Request{Kind: File, Path: "ipxe.cfg-default-"}},
		{"ipxe.cfg-default-amd64-", Request{Kind: File, Path: "ipxe.cfg-default-amd64-"}},
		{"ipxe.cfg-default-amd64-generic-", Request{Kind: File, Path: "ipxe.cfg-default-amd64-generic-"}},
		{"ipxe.cfg-default-amd64--x", Request{Kind: File, Path: "ipxe.cfg-default-amd64--x"}},
		{"grub/grub.cfg-default-9x", Request{Kind: File, Path: "grub/grub.cfg-default-9x"}},
		{"pxelinux.cfg", Request{Kind: File, Path: "pxelinux.cfg"}},
		{"bios/pxelinux.cfg/default", Request{Kind: File, Path: "bios/pxelinux.cfg/default"}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Parse(%q) =\n %+v, want\n %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{
		"", "/", "//", `\`,
		"../../etc/passwd", "/../etc/passwd", "grub/../../x", "a/../b", "a/..", "..",
		`..\..\windows\win.ini`, `grub\..\..\x`,
		"%2e%2e/%2e%2e/etc/passwd", "images/%2E%2E/x", "ipxe.cfg%00", "%2fetc%2fpasswd",
		"./pxelinux.0", "a/./b", ".", "...", "a..b", "pxelinux.cfg/..",
		"pxelinux.0\x00", "\x00", "a\x00/../b", "pxelinux.0\n", "ipxe.cfg\r\n", "a\tb", "\x7f", "\x1b[2J",
		"foo bar", "naïve.efi", "\xff\xfe", "ipxe.cfg?mac=1", "ipxe.cfg#x", "a;b", "a|b", "$(reboot)", "a'b", `a"b`, "a*b",
		strings.Repeat("a", MaxPathLen+1),
		strings.Repeat("a/", MaxPathLen/2+1),
	} {
		r, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", in, r)
			continue
		}
		if !errors.Is(err, ErrBadPath) {
			t.Errorf("Parse(%q): %v does not wrap ErrBadPath", in, err)
		}
	}
}

func TestParseLengthCapIsInclusive(t *testing.T) {
	in := strings.Repeat("a", MaxPathLen)
	if r, err := Parse(in); err != nil || r.Path != in {
		t.Fatalf("Parse of %d bytes: %+v, %v", MaxPathLen, r, err)
	}
}

func TestRequestPredicates(t *testing.T) {
	for in, want := range map[string][2]bool{ // PerMachine, Fallthrough
		"ipxe.cfg-52:54:00:ab:cd:ef":                        {true, false},
		"pxelinux.cfg/564d1f2a-0b3c-4d5e-8f90-a1b2c3d4e5f6": {true, false},
		"pxelinux.cfg/C000025B":                             {false, true},
		"grub/grub.cfg-C0A8":                                {false, true},
		"pxelinux.cfg/default":                              {false, false},
		"grub/grub.cfg":                                     {false, false},
		"pxelinux.0":                                        {false, false},
	} {
		r, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]bool{r.PerMachine(), r.Fallthrough()}; got != want {
			t.Errorf("%s: PerMachine, Fallthrough = %v, want %v", in, got, want)
		}
	}
}

func TestDefaultRequestFor(t *testing.T) {
	tests := []struct {
		in       string
		arch     string // set by the caller, as from DHCP option 93
		wantPath string
		wantArch string
	}{
		{"ipxe.cfg-52:54:00:ab:cd:ef", "", "ipxe.cfg-default-amd64", "amd64"},
		{"ipxe.cfg-52:54:00:ab:cd:ef", "arm64", "ipxe.cfg-default-arm64", "arm64"},
		{"grub/grub.cfg-52:54:00:ab:cd:ef", "", "grub/grub.cfg-default-amd64", "amd64"},
		{"grub/grub.cfg-01-52-54-00-ab-cd-ef", "aarch64", "grub/grub.cfg-default-arm64", "arm64"},
		{"grub/grub.cfg-C0A8010A", "x86_64", "grub/grub.cfg-default-amd64", "amd64"},
		{"pxelinux.cfg/01-52-54-00-ab-cd-ef", "", "pxelinux.cfg/default", "amd64"},
		{"pxelinux.cfg/564d1f2a-0b3c-4d5e-8f90-a1b2c3d4e5f6", "", "pxelinux.cfg/default", "amd64"},
		{"pxelinux.cfg/C000025B", "i386", "pxelinux.cfg/default-i386", "i386"},
		{"ipxe.cfg-52:54:00:ab:cd:ef", "bad arch!", "ipxe.cfg-default-amd64", "amd64"},
	}
	for _, tt := range tests {
		r, err := Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		r.Arch = tt.arch
		d := DefaultRequestFor(r)
		if d.Path != tt.wantPath || d.Arch != tt.wantArch || !d.Default || d.Kind != r.Kind || d.PerMachine() {
			t.Errorf("DefaultRequestFor(%s, arch %q) = %+v, want %s (%s)", tt.in, tt.arch, d, tt.wantPath, tt.wantArch)
		}
		// The default is itself a name the loader would ask for.
		if again, err := Parse(d.Path); err != nil || again.Kind != d.Kind || !again.Default || again.Arch != d.Arch {
			t.Errorf("Parse(%q) = %+v, %v; want the default it came from", d.Path, again, err)
		}
	}
	for _, in := range []string{"ipxe.cfg-default-arm64", "grub/grub.cfg", "pxelinux.cfg/default", "pxelinux.0"} {
		r, _ := Parse(in)
		if d := DefaultRequestFor(r); d != r {
			t.Errorf("DefaultRequestFor(%s) = %+v, want it unchanged", in, d)
		}
	}
}
