package bootcfg

import (
	"errors"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
)

// FuzzParse: Parse never panics, refusals wrap ErrBadPath, and anything
// accepted is clean (relative, no "..", no NUL or other control bytes, no
// backslash) and parses again to the same request, so servers can log,
// key and open Path without cleaning it again.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"ipxe.cfg", "ipxe.cfg-52:54:00:ab:cd:ef", "ipxe.cfg-52-54-00-AB-CD-EF", "ipxe.cfg-default-arm64",
		"grub/grub.cfg", "grub/grub.cfg-52:54:00:ab:cd:ef", "grub/grub.cfg-01-52-54-00-ab-cd-ef",
		"grub/grub.cfg-default-x86_64", "grub/grub.cfg-C0A8", "pxelinux.cfg/default-arm64-generic",
		"pxelinux.cfg/564d1f2a-0b3c-4d5e-8f90-a1b2c3d4e5f6", "pxelinux.cfg/01-52-54-00-ab-cd-ef",
		"pxelinux.cfg/C000025B", "/pxelinux.0", `\boot\bootx64.efi`, "../../etc/passwd", "grub/../../x",
		"%2e%2e/x", "a\x00b", "a/./b", "//a//b//",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrBadPath) {
				t.Fatalf("Parse(%q): %v does not wrap ErrBadPath", in, err)
			}
			return
		}
		p := r.Path
		if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") ||
			strings.Contains(p, "..") || strings.Contains(p, `\`) || len(p) > MaxPathLen {
			t.Fatalf("Parse(%q) accepted unclean path %q", in, p)
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == "." {
				t.Fatalf("Parse(%q) accepted %q with a '.' segment", in, p)
			}
		}
		for i := 0; i < len(p); i++ {
			if p[i] <= ' ' || p[i] >= 0x7f || p[i] == '%' {
				t.Fatalf("Parse(%q) accepted %q with byte %#02x", in, p, p[i])
			}
		}
		if again, err := Parse(p); err != nil || again != r {
			t.Fatalf("Parse(%q) = %+v but Parse(%q) = %+v, %v", in, r, p, again, err)
		}
		if r.MAC != "" {
			if m, err := machine.NormaliseMAC(r.MAC); err != nil || m != r.MAC {
				t.Fatalf("Parse(%q): MAC %q not normalised", in, r.MAC)
			}
		}
		if r.Kind == File && (r.MAC != "" || r.UUID != "" || r.Default || r.Top || r.HexIP != "") {
			t.Fatalf("Parse(%q): file request with config fields %+v", in, r)
		}
	})
}

// FuzzRender: random params are either refused with ErrBadParams or give
// a config of printable ASCII lines with exactly as many lines as the
// same config rendered from harmless stand-ins, so no value injected a
// line (a newline, or a loader's own line break) of its own.
func FuzzRender(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(0), "amd64", "node-01", "x7ykqe", "52:54:00:ab:cd:ef", kernelURL, initrdURL, "console=ttyS0", "anvil.token=a:b:c")
	f.Add(uint8(1), uint8(1), uint8(7), "arm64/generic", "", "", "", kernelPath, initrdPath, "BOOTIF=01-x", "q")
	f.Add(uint8(2), uint8(2), uint8(0), "", "n", "s", "", "http://[fd00::1]:80/k", "i", "a\nKERNEL x", "b")
	f.Add(uint8(0), uint8(3), uint8(1), "i386", "a.b", "id", "52-54-00-AB-CD-EF", "", "", "", "")
	f.Add(uint8(1), uint8(4), uint8(2), "x", "h\n", "s", "m", "k'", "i", "'", "${x}")
	f.Fuzz(func(t *testing.T, kindN, purposeN, flags uint8, arch, host, sysid, mac, kurl, iurl, p1, p2 string) {
		kinds := []Kind{IPXE, GRUB, PXELINUX, File}
		purposes := []machine.BootPurpose{machine.BootEnlist, machine.BootEphemeral, machine.BootInstall, machine.BootLocal, machine.BootPowerOff, "bogus"}
		kind, purpose := kinds[int(kindN)%len(kinds)], purposes[int(purposeN)%len(purposes)]
		var ps []string
		for _, p := range []string{p1, p2} {
			if p != "" {
				ps = append(ps, p)
			}
		}
		p := Params{
			Purpose: purpose, Arch: arch, Hostname: host, SystemID: sysid, MAC: mac,
			KernelURL: kurl, InitrdURL: iurl, KernelParams: ps,
			LocalBoot: LocalBoot{IPXESanboot: flags&1 != 0, GRUBExitOnly: flags&2 != 0, PXELINUXChain: flags&4 != 0},
		}
		out, err := Render(kind, p)
		if err != nil {
			if !errors.Is(err, ErrBadParams) {
				t.Fatalf("Render: %v does not wrap ErrBadParams", err)
			}
			return
		}
		for i := 0; i < len(out); i++ {
			if c := out[i]; (c < ' ' && c != '\n' && c != '\t') || c >= 0x7f {
				t.Fatalf("output has byte %#02x:\n%s", c, out)
			}
		}
		ref, err := Render(kind, standIn(p))
		if err != nil {
			t.Fatalf("stand-in params refused: %v", err)
		}
		if got, want := strings.Count(string(out), "\n"), strings.Count(string(ref), "\n"); got != want {
			t.Fatalf("%d lines, stand-ins give %d:\n%s\n---\n%s", got, want, out, ref)
		}
		if kind == IPXE && !strings.HasPrefix(string(out), "#!ipxe\n") {
			t.Fatalf("iPXE config without #!ipxe:\n%s", out)
		}
	})
}

// standIn replaces every caller string with a harmless one of the same
// shape (present or not, URL or path, BOOTIF or not), so the config has the
// same structure.
func standIn(p Params) Params {
	s := p
	pick := func(v, repl string) string {
		if v == "" {
			return ""
		}
		return repl
	}
	s.Hostname, s.SystemID, s.MAC = pick(p.Hostname, "h"), pick(p.SystemID, "s"), pick(p.MAC, "52:54:00:00:00:01")
	loc := func(v string) string {
		if i := strings.Index(v, "://"); i >= 0 {
			return v[:i] + "://h/k"
		}
		return pick(v, "k")
	}
	s.KernelURL, s.InitrdURL = loc(p.KernelURL), loc(p.InitrdURL)
	s.KernelParams = nil
	for _, kp := range p.KernelParams {
		if strings.HasPrefix(kp, "BOOTIF=") {
			s.KernelParams = append(s.KernelParams, "BOOTIF=x")
		} else {
			s.KernelParams = append(s.KernelParams, "p")
		}
	}
	return s
}
