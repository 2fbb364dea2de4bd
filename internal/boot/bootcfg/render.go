package bootcfg

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/anvilmetal/anvil/internal/machine"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("bootcfg").Funcs(syntaxFuncs).ParseFS(templateFS, "templates/*.tmpl"))

// view is what the templates see: every field already validated and put
// in the form its loader reads.
type view struct {
	Purpose   string
	Comment   string // who the config is for, for a '#' line
	Message   string // shown on the console as the loader runs the config
	Title     string // GRUB menu entry
	Kernel    string
	Initrd    string
	Params    []string
	BootIF    bool     // add the loader's own BOOTIF
	Loaders   []string // GRUB local: ESP paths to chainload, in order
	LocalBoot LocalBoot
}

var purposeText = map[machine.BootPurpose]string{
	machine.BootEnlist:    "enlisting this machine",
	machine.BootEphemeral: "starting the ephemeral environment",
	machine.BootInstall:   "starting the installer",
	machine.BootLocal:     "booting the local disk",
	machine.BootPowerOff:  "this machine should be off",
}

// Render writes the config for one loader (IPXE, GRUB or PXELINUX) and one
// boot purpose. It refuses, wrapping ErrBadParams, any value it cannot
// write safely rather than escaping it.
func Render(kind Kind, p Params) ([]byte, error) {
	v, err := prepare(kind, p)
	if err != nil {
		return nil, err
	}
	name := string(kind) + "-boot.tmpl"
	switch p.Purpose {
	case machine.BootLocal:
		name = string(kind) + "-local.tmpl"
	case machine.BootPowerOff:
		name = string(kind) + "-poweroff.tmpl"
	}
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadParams, err)
	}
	return b.Bytes(), nil
}

// GRUBTop is grub/grub.cfg, the file GRUB's netboot image loads first.
// It is the same for every machine, as in MAAS.
func GRUBTop() []byte {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, "grub-top.tmpl", nil); err != nil {
		panic(err) // the template has no inputs: only a broken build fails
	}
	return b.Bytes()
}

func prepare(kind Kind, p Params) (view, error) {
	text, ok := purposeText[p.Purpose]
	if !ok {
		return view{}, fmt.Errorf("%w: purpose %q", ErrBadParams, p.Purpose)
	}
	var where func(location) (string, error)
	switch kind {
	case IPXE:
		where = location.forIPXE
	case GRUB:
		where = location.forGRUB
	case PXELINUX:
		where = location.forPXELINUX
	default:
		return view{}, fmt.Errorf("%w: no config for kind %q", ErrBadParams, kind)
	}
	arch, err := paramsArch(p.Arch)
	if err != nil {
		return view{}, err
	}
	for _, c := range []error{
		checkLabel("hostname", p.Hostname, isHostname),
		checkLabel("system_id", p.SystemID, isSystemID),
		checkLabel("MAC", p.MAC, isMAC),
	} {
		if c != nil {
			return view{}, c
		}
	}
	v := view{Purpose: string(p.Purpose), Title: "Anvil " + string(p.Purpose), LocalBoot: p.LocalBoot}
	mac, _ := machine.NormaliseMAC(p.MAC) // "" when absent; checked above
	v.Comment = strings.Join(nonEmpty(p.Hostname, p.SystemID, mac), " ")
	who := p.Hostname
	if who == "" {
		who = p.SystemID
	}
	v.Message = "Anvil: " + text
	if who != "" {
		v.Message = "Anvil (" + who + "): " + text
	}
	switch p.Purpose {
	case machine.BootLocal:
		if !p.LocalBoot.GRUBExitOnly {
			v.Loaders = espLoaders(arch)
		}
		return v, nil
	case machine.BootPowerOff:
		return v, nil
	}
	hasBootIF, err := checkParams(p.KernelParams)
	if err != nil {
		return view{}, err
	}
	v.Params, v.BootIF = p.KernelParams, !hasBootIF
	for _, f := range []struct {
		what, in string
		out      *string
	}{{"kernel", p.KernelURL, &v.Kernel}, {"initrd", p.InitrdURL, &v.Initrd}} {
		l, err := parseLocation(f.what, f.in)
		if err != nil {
			return view{}, err
		}
		if *f.out, err = where(l); err != nil {
			return view{}, err
		}
	}
	return v, nil
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// espLoaders lists the OS loaders GRUB looks for on local ESPs, in order.
// Distribution shims come first (Secure Boot needs them, and the
// distribution's own entry boots without side effects); the removable-media
// path EFI/BOOT/BOOT<arch>.EFI comes last because on many installs it is
// shim's fallback, which rewrites the firmware's boot entries and could
// put the disk before the network. Arches without EFI chainloading in GRUB
// get none and just exit to the firmware.
func espLoaders(arch string) []string {
	suffix := map[string]string{"amd64": "x64", "arm64": "aa64", "i386": "ia32", "riscv64": "riscv64"}[arch]
	if suffix == "" {
		return nil
	}
	var l []string
	for _, d := range []string{"ubuntu", "debian", "rocky", "almalinux", "redhat", "centos", "fedora"} {
		l = append(l, "/efi/"+d+"/shim"+suffix+".efi", "/efi/"+d+"/grub"+suffix+".efi")
	}
	if arch == "amd64" || arch == "arm64" {
		l = append(l, "/efi/Microsoft/Boot/bootmgfw.efi")
	}
	return append(l, "/efi/boot/boot"+suffix+".efi")
}
