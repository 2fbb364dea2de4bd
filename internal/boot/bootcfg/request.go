package bootcfg

import (
	"errors"
	"fmt"
	"strings"
)

// Kind is what a requested name is: a config for one loader, or a plain
// file (loaders, kernels, images) the server looks up in its tree.
type Kind string

const (
	IPXE     Kind = "ipxe"
	GRUB     Kind = "grub"
	PXELINUX Kind = "pxelinux"
	File     Kind = "file"
)

// Request is a parsed file name.
type Request struct {
	Kind Kind
	// MAC is set for a per-MAC config, lower-case colon form whatever
	// spelling the loader used, so it matches the rack's cache keys.
	MAC string
	// UUID is set for PXELINUX's per-UUID config (SMBIOS UUID, lower case).
	UUID string
	// Arch and Subarch are set for default configs (Debian names: amd64,
	// arm64, ...; x86_64 and aarch64 are translated).
	Arch    string
	Subarch string
	// Default marks the default (fallback) config: what a machine nobody
	// knows gets, so the server answers it with enlistment.
	Default bool
	// Top marks GRUB's grub/grub.cfg, the fixed file that chains to the
	// per-MAC config and then the default one; see GRUBTop.
	Top bool
	// HexIP is set for the hex-IP names PXELINUX and GRUB try between the
	// per-machine and the default names ("C000025B", "C00002", ...). Anvil
	// knows machines by MAC and UUID, not address, so the server answers
	// these not-found and the loader moves on to the default; see
	// Fallthrough.
	HexIP string
	// Path is the cleaned name: relative, slash-separated, no "." or ".."
	// segments. For File requests it is what to look up in the tree.
	Path string
}

// PerMachine reports whether the request names one machine, so the server
// must look it up (and answer not-found for a machine it does not know,
// letting the loader fall back to the default).
func (r Request) PerMachine() bool { return r.MAC != "" || r.UUID != "" }

// Fallthrough reports whether the server should answer not-found without
// looking anything up: the name is one a loader tries on its way to the
// default, and Anvil serves nothing under it.
func (r Request) Fallthrough() bool { return r.HexIP != "" }

// MaxPathLen bounds a requested name. A whole TFTP request fits in 512
// bytes and boot paths are short; the cap keeps hostile names from
// costing more than a glance.
const MaxPathLen = 1024

// ErrBadPath is wrapped by every Parse refusal. Servers answer it as a
// refusal (TFTP access violation, HTTP 400), not as not-found.
var ErrBadPath = errors.New("bad boot file name")

// Parse classifies a name asked for over TFTP or HTTP. HTTP servers pass
// the decoded URL path; nothing is percent-decoded here, and '%' is
// refused so an encoded ".." cannot mean one thing here and another in a
// file server.
func Parse(path string) (Request, error) {
	clean, err := cleanPath(path)
	if err != nil {
		return Request{}, err
	}
	for _, match := range []func(string) (Request, bool){matchIPXE, matchGRUB, matchPXELINUX} {
		if r, ok := match(clean); ok {
			r.Path = clean
			return r, nil
		}
	}
	return Request{Kind: File, Path: clean}, nil
}

// cleanPath normalises a requested name or refuses it. The allowed
// characters are those of real boot file names (loader binaries, kernel
// and image paths, MACs); anything else (spaces, '%', quotes, non-ASCII,
// control characters) is refused because no firmware sends it and each
// one is a way for a name to read differently in the next layer down.
func cleanPath(p string) (string, error) {
	if len(p) > MaxPathLen {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrBadPath, MaxPathLen)
	}
	for i := 0; i < len(p); i++ {
		if !pathByte(p[i]) {
			return "", fmt.Errorf("%w: byte %#02x at %d is not allowed", ErrBadPath, p[i], i)
		}
	}
	// Some PXE ROMs (and Windows-built configs) send backslashes.
	p = strings.ReplaceAll(p, `\`, "/")
	var segs []string
	for _, s := range strings.Split(p, "/") {
		switch {
		case s == "": // leading, trailing or doubled slash
			continue
		case s == ".", strings.Contains(s, ".."):
			// ".." anywhere, not only as a segment: no boot file has it,
			// and refusing the substring leaves nothing to argue about.
			return "", fmt.Errorf("%w: %q segment", ErrBadPath, s)
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return "", fmt.Errorf("%w: empty", ErrBadPath)
	}
	return strings.Join(segs, "/"), nil
}

func pathByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte(`._-~+=,:@/\`, c) >= 0
}
