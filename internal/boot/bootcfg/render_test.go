package bootcfg

import (
	"errors"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
)

const (
	kernelURL  = "http://10.0.0.1:5248/images/ubuntu/amd64/ga-24.04/noble/stable/boot-kernel"
	initrdURL  = "http://10.0.0.1:5248/images/ubuntu/amd64/ga-24.04/noble/stable/boot-initrd"
	kernelPath = "images/ubuntu/amd64/ga-24.04/noble/stable/boot-kernel"
	initrdPath = "/images/ubuntu/amd64/ga-24.04/noble/stable/boot-initrd"
)

var kernelParams = []string{"console=ttyS0,115200", "anvil.url=http://10.0.0.1:5240/MAAS/metadata/", "anvil.token=K:T:S"}

func params(p machine.BootPurpose) Params {
	return Params{
		Purpose: p, Arch: "amd64/generic", Hostname: "node-01", SystemID: "x7ykqe", MAC: "52-54-00-AB-CD-EF",
		KernelURL: kernelURL, InitrdURL: initrdURL, KernelParams: kernelParams,
	}
}

var kernelPurposes = []machine.BootPurpose{machine.BootEnlist, machine.BootEphemeral, machine.BootInstall}

func TestRenderKernelPurposes(t *testing.T) {
	want := map[Kind][]string{
		IPXE: {
			"kernel --name kernel " + kernelURL + " initrd=initrd console=ttyS0,115200 anvil.url=http://10.0.0.1:5240/MAAS/metadata/ anvil.token=K:T:S BOOTIF=01-${mac:hexhyp} || goto failed\n",
			"\ninitrd --name initrd " + initrdURL + " || goto failed\n",
			"\nboot || goto failed\n",
			"\necho Anvil (node-01): ",
		},
		GRUB: {
			"\tlinux '(http,10.0.0.1:5248)/images/ubuntu/amd64/ga-24.04/noble/stable/boot-kernel' 'console=ttyS0,115200' 'anvil.url=http://10.0.0.1:5240/MAAS/metadata/' 'anvil.token=K:T:S' BOOTIF=01-${net_default_mac}\n",
			"\tinitrd '(http,10.0.0.1:5248)/images/ubuntu/amd64/ga-24.04/noble/stable/boot-initrd'\n",
			"\nset timeout=0\n",
		},
		PXELINUX: {
			"\nDEFAULT anvil\n",
			"\n  KERNEL " + kernelURL + "\n",
			"\n  INITRD " + initrdURL + "\n",
			"\n  APPEND console=ttyS0,115200 anvil.url=http://10.0.0.1:5240/MAAS/metadata/ anvil.token=K:T:S\n",
			"\n  IPAPPEND 2\n",
		},
	}
	for kind, subs := range want {
		for _, p := range kernelPurposes {
			out := mustRender(t, kind, params(p))
			for _, s := range append(subs, "# Anvil "+string(p)+" config for node-01 x7ykqe 52:54:00:ab:cd:ef\n") {
				if !strings.Contains(out, s) {
					t.Errorf("%s %s: no %q in\n%s", kind, p, s, out)
				}
			}
			if kind == IPXE && !strings.HasPrefix(out, "#!ipxe\n") {
				t.Errorf("iPXE config does not start with #!ipxe:\n%s", out)
			}
		}
	}
}

func TestRenderPaths(t *testing.T) {
	p := params(machine.BootEphemeral)
	p.KernelURL, p.InitrdURL = kernelPath, initrdPath
	for kind, subs := range map[Kind][]string{
		GRUB:     {"\tlinux '/" + kernelPath + "' ", "\tinitrd '" + initrdPath + "'\n"},
		PXELINUX: {"\n  KERNEL " + kernelPath + "\n", "\n  INITRD " + strings.TrimPrefix(initrdPath, "/") + "\n"},
	} {
		out := mustRender(t, kind, p)
		for _, s := range subs {
			if !strings.Contains(out, s) {
				t.Errorf("%s: no %q in\n%s", kind, s, out)
			}
		}
	}
	if _, err := Render(IPXE, p); !errors.Is(err, ErrBadParams) {
		t.Errorf("iPXE with paths: %v, want ErrBadParams", err)
	}
	// https is iPXE's alone.
	p = params(machine.BootEphemeral)
	p.KernelURL = strings.Replace(kernelURL, "http:", "https:", 1)
	if out := mustRender(t, IPXE, p); !strings.Contains(out, " https://10.0.0.1:5248/images/") {
		t.Errorf("iPXE https:\n%s", out)
	}
	for _, k := range []Kind{GRUB, PXELINUX} {
		if _, err := Render(k, p); !errors.Is(err, ErrBadParams) {
			t.Errorf("%s with https: %v, want ErrBadParams", k, err)
		}
	}
	// IPv6 hosts keep their brackets.
	p = params(machine.BootEphemeral)
	p.KernelURL = "http://[fd00::1]:5248/k"
	if out := mustRender(t, GRUB, p); !strings.Contains(out, "linux '(http,[fd00::1]:5248)/k' ") {
		t.Errorf("GRUB IPv6:\n%s", out)
	}
}

func TestRenderCallerBootIF(t *testing.T) {
	p := params(machine.BootInstall)
	p.KernelParams = append([]string{"BOOTIF=01-52-54-00-ab-cd-ef"}, kernelParams...)
	for kind, auto := range map[Kind]string{IPXE: "${mac:hexhyp}", GRUB: "${net_default_mac}", PXELINUX: "IPAPPEND"} {
		out := mustRender(t, kind, p)
		if strings.Contains(out, auto) || !strings.Contains(out, "BOOTIF=01-52-54-00-ab-cd-ef") {
			t.Errorf("%s: caller's BOOTIF should replace %s:\n%s", kind, auto, out)
		}
	}
}

func TestRenderNoParams(t *testing.T) {
	p := params(machine.BootEnlist)
	p.KernelParams, p.Hostname, p.SystemID, p.MAC = nil, "", "", ""
	for _, kind := range []Kind{IPXE, GRUB, PXELINUX} {
		out := mustRender(t, kind, p)
		if strings.Contains(out, "  APPEND") || strings.Contains(out, " for ") || !strings.Contains(out, "Anvil: enlisting") {
			t.Errorf("%s without params or names:\n%s", kind, out)
		}
	}
}

func TestRenderLocal(t *testing.T) {
	tests := []struct {
		kind     Kind
		lb       LocalBoot
		arch     string
		want     []string
		dontWant []string
	}{
		{IPXE, LocalBoot{}, "", []string{"#!ipxe\n", "\nexit\n"}, []string{"sanboot", "kernel"}},
		{IPXE, LocalBoot{IPXESanboot: true}, "", []string{"\nsanboot --no-describe --drive 0x80 ||\n", "0x83 ||\nexit\n"}, nil},
		{GRUB, LocalBoot{}, "amd64", []string{"'/efi/ubuntu/shimx64.efi'", "'/efi/boot/bootx64.efi'; do\n", "search --no-floppy --set=root --file \"$loader\"", "chainloader \"$loader\"", "\texit 1\n"}, []string{"aa64", "\tlinux"}},
		{GRUB, LocalBoot{}, "arm64/generic", []string{"'/efi/ubuntu/shimaa64.efi'", "'/efi/boot/bootaa64.efi'", "\texit 1\n"}, []string{"x64.efi"}},
		{GRUB, LocalBoot{}, "ppc64el", []string{"\texit 1\n"}, []string{"chainloader", "\tfor "}},
		{GRUB, LocalBoot{GRUBExitOnly: true}, "amd64", []string{"\texit 1\n"}, []string{"chainloader", "search"}},
		{PXELINUX, LocalBoot{}, "", []string{"\nDEFAULT local\n", "\n  LOCALBOOT 0\n"}, []string{"chain.c32", "KERNEL"}},
		{PXELINUX, LocalBoot{PXELINUXChain: true}, "", []string{"\n  COM32 chain.c32\n  APPEND hd0\n"}, []string{"LOCALBOOT"}},
	}
	for _, tt := range tests {
		p := params(machine.BootLocal)
		p.LocalBoot, p.Arch = tt.lb, tt.arch
		// Kernel fields are ignored for local boot, even when unusable.
		p.KernelURL, p.KernelParams = "", []string{"bad\nparam"}
		out := mustRender(t, tt.kind, p)
		for _, s := range tt.want {
			if !strings.Contains(out, s) {
				t.Errorf("%s %+v %s: no %q in\n%s", tt.kind, tt.lb, tt.arch, s, out)
			}
		}
		for _, s := range tt.dontWant {
			if strings.Contains(out, s) {
				t.Errorf("%s %+v %s: %q in\n%s", tt.kind, tt.lb, tt.arch, s, out)
			}
		}
	}
}

func TestRenderPowerOff(t *testing.T) {
	for kind, want := range map[Kind][]string{
		IPXE:     {"#!ipxe\n", "\npoweroff ||\n", "\nexit\n"},
		GRUB:     {"\thalt\n", "should be off"},
		PXELINUX: {"\n  LOCALBOOT -1\n", "\nSAY Anvil (node-01): this machine should be off\n"},
	} {
		out := mustRender(t, kind, params(machine.BootPowerOff))
		for _, s := range want {
			if !strings.Contains(out, s) {
				t.Errorf("%s poweroff: no %q in\n%s", kind, s, out)
			}
		}
		if strings.Contains(out, "kernel") || strings.Contains(out, "KERNEL") || strings.Contains(out, "\tlinux") {
			t.Errorf("%s poweroff boots a kernel:\n%s", kind, out)
		}
	}
}

func TestGRUBTop(t *testing.T) {
	top := string(GRUBTop())
	mac := strings.Index(top, "configfile /grub/grub.cfg-${net_default_mac}\n")
	def := strings.Index(top, "configfile /grub/grub.cfg-default-${grub_cpu}\n")
	if mac < 0 || def < mac {
		t.Errorf("top file should chain per-MAC then default:\n%s", top)
	}
	// What the top file asks for parses back as per-MAC and default.
	if r, _ := Parse("grub/grub.cfg-52:54:00:ab:cd:ef"); r.MAC == "" {
		t.Error("per-MAC name from the top file not recognised")
	}
	if r, _ := Parse("grub/grub.cfg-default-x86_64"); !r.Default || r.Arch != "amd64" {
		t.Error("default name from the top file not recognised")
	}
}

func TestRenderRefuses(t *testing.T) {
	mod := func(f func(*Params)) Params {
		p := params(machine.BootEnlist)
		f(&p)
		return p
	}
	withParam := func(s string) Params {
		return mod(func(p *Params) { p.KernelParams = []string{"quiet", s} })
	}
	cases := map[string]Params{
		"newline in param": withParam("a=b\nkernel http://evil/x"),
		"CR in param":      withParam("a=b\r"),
		"space in param":   withParam("a=b c"),
		"tab in param":     withParam("a=\tb"),
		"double quote":     withParam(`a="b"`),
		"single quote":     withParam("a='b'"),
		"backslash":        withParam(`a=b\`),
		"dollar":           withParam("a=${mac}"),
		"semicolon":        withParam("a=b;reboot"),
		"pipe":             withParam("a||shell"),
		"ampersand":        withParam("a&&shell"),
		"brace":            withParam("a=}"),
		"hash":             withParam("#a"),
		"NUL":              withParam("a\x00"),
		"non-ASCII":        withParam("a=é"),
		"empty param":      withParam(""),
		"initrd param":     withParam("initrd=http://evil/x"),
		"long param":       withParam("a=" + strings.Repeat("x", maxParamLen)),
		"long command line": mod(func(p *Params) {
			p.KernelParams = strings.Fields(strings.Repeat("a="+strings.Repeat("x", 198)+" ", 10))
		}),
		"too many params":        mod(func(p *Params) { p.KernelParams = strings.Fields(strings.Repeat("q ", maxParams+1)) }),
		"no kernel":              mod(func(p *Params) { p.KernelURL = "" }),
		"no initrd":              mod(func(p *Params) { p.InitrdURL = "" }),
		"ftp URL":                mod(func(p *Params) { p.KernelURL = "ftp://10.0.0.1/k" }),
		"upper-case scheme":      mod(func(p *Params) { p.KernelURL = "HTTP://10.0.0.1/k" }),
		"userinfo":               mod(func(p *Params) { p.KernelURL = "http://u:p@10.0.0.1/k" }),
		"query":                  mod(func(p *Params) { p.KernelURL = "http://10.0.0.1/k?x=1" }),
		"empty query":            mod(func(p *Params) { p.KernelURL = "http://10.0.0.1/k?" }),
		"fragment":               mod(func(p *Params) { p.KernelURL = "http://10.0.0.1/k#x" }),
		"escape":                 mod(func(p *Params) { p.KernelURL = "http://10.0.0.1/%6b" }),
		"dotdot URL":             mod(func(p *Params) { p.KernelURL = "http://10.0.0.1/a/../k" }),
		"encoded dotdot URL":     mod(func(p *Params) { p.KernelURL = "http://10.0.0.1/%2e%2e/k" }),
		"no path":                mod(func(p *Params) { p.KernelURL = "http://10.0.0.1" }),
		"directory":              mod(func(p *Params) { p.KernelURL = "http://10.0.0.1/k/" }),
		"bad port":               mod(func(p *Params) { p.KernelURL = "http://10.0.0.1:x/k" }),
		"host with quote":        mod(func(p *Params) { p.KernelURL = "http://a'b/k" }),
		"IPv6 zone":              mod(func(p *Params) { p.KernelURL = "http://[fe80::1%25eth0]/k" }),
		"newline in URL":         mod(func(p *Params) { p.KernelURL = "http://10.0.0.1/k\nboot" }),
		"space in URL":           mod(func(p *Params) { p.KernelURL = "http://10.0.0.1/k boot" }),
		"dotdot path":            mod(func(p *Params) { p.InitrdURL = "../../etc/shadow" }),
		"colon path":             mod(func(p *Params) { p.InitrdURL = "::images/k" }),
		"doubled slash path":     mod(func(p *Params) { p.InitrdURL = "images//k" }),
		"backslash path":         mod(func(p *Params) { p.InitrdURL = `images\k` }),
		"hostname":               mod(func(p *Params) { p.Hostname = "node-01\nboot" }),
		"hostname with quote":    mod(func(p *Params) { p.Hostname = "node'01" }),
		"system_id":              mod(func(p *Params) { p.SystemID = "x7y$kqe" }),
		"MAC":                    mod(func(p *Params) { p.MAC = "52:54:00:ab:cd" }),
		"arch":                   mod(func(p *Params) { p.Arch = "amd64;reboot" }),
		"subarch":                mod(func(p *Params) { p.Arch = "amd64/gen eric" }),
		"purpose":                mod(func(p *Params) { p.Purpose = "rescue" }),
		"empty purpose":          mod(func(p *Params) { p.Purpose = "" }),
		"newline in local arch":  mod(func(p *Params) { p.Purpose, p.Arch = machine.BootLocal, "amd64\n" }),
		"bad hostname, poweroff": mod(func(p *Params) { p.Purpose, p.Hostname = machine.BootPowerOff, "a b" }),
	}
	for name, p := range cases {
		for _, kind := range []Kind{IPXE, GRUB, PXELINUX} {
			if out, err := Render(kind, p); !errors.Is(err, ErrBadParams) {
				t.Errorf("%s, %s: %v, want ErrBadParams; output:\n%s", name, kind, err, out)
			}
		}
	}
	for _, kind := range []Kind{File, "", "syslinux"} {
		if _, err := Render(kind, params(machine.BootEnlist)); !errors.Is(err, ErrBadParams) {
			t.Errorf("kind %q: %v, want ErrBadParams", kind, err)
		}
	}
}

// TestSyntaxFuncs covers the second line of defence on its own, since
// validation normally stops bad values before the templates see them.
func TestSyntaxFuncs(t *testing.T) {
	bad := map[string][]string{
		"ipxe":     {"", "a b", "a\nb", "${x}", "a||b", "#x"},
		"ipxetext": {"", "a\nb", "${x}", "a;b"},
		"pxe":      {"", "a b", "a\rb", "a\x00"},
		"text":     {"", "a\nb", "a\tb", "é"},
		"grub":     {"", "a'b", "a\nb"},
	}
	for name, ins := range bad {
		f := syntaxFuncs[name].(func(string) (string, error))
		for _, in := range ins {
			if out, err := f(in); err == nil {
				t.Errorf("%s(%q) = %q, want an error", name, in, out)
			}
		}
	}
	if out, _ := syntaxFuncs["grub"].(func(string) (string, error))(`a"$b;{}`); out != `'a"$b;{}'` {
		t.Errorf("grub quoting: %s", out)
	}
}

func mustRender(t *testing.T, kind Kind, p Params) string {
	t.Helper()
	b, err := Render(kind, p)
	if err != nil {
		t.Fatalf("Render(%s, %+v): %v", kind, p, err)
	}
	return string(b)
}
