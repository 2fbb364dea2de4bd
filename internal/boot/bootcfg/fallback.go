package bootcfg

// DefaultRequestFor returns the default config request a loader ends up
// asking for after r fails: per-MAC, per-UUID and hex-IP names fall back
// to default-<arch> (iPXE and GRUB, as MAAS's chain files do) or to
// "default" (PXELINUX's own search order). A server that knows nothing of
// the machine answers with this instead, saving the loader a round trip
// where it can (HTTP), and must answer not-found where it cannot (TFTP
// file names are what the loader asked for).
//
// Per-machine names carry no architecture; r.Arch is used if the caller
// set it (from DHCP option 93, say), amd64 otherwise. Default, top and
// File requests have no fallback and are returned unchanged.
func DefaultRequestFor(r Request) Request {
	if r.Default || r.Top || (r.Kind != IPXE && r.Kind != GRUB && r.Kind != PXELINUX) {
		return r
	}
	arch := r.Arch
	if a, ok := normArch(arch); ok {
		arch = a
	} else {
		arch = "amd64"
	}
	d := Request{Kind: r.Kind, Arch: arch, Default: true}
	switch r.Kind {
	case IPXE:
		d.Path = "ipxe.cfg-default-" + arch
	case GRUB:
		d.Path = "grub/grub.cfg-default-" + arch
	case PXELINUX:
		// PXELINUX itself only ever asks for "default"; MAAS's
		// default-<arch> names are for other arches' loaders.
		d.Path = "pxelinux.cfg/default"
		if arch != "amd64" {
			d.Path += "-" + arch
		}
	}
	return d
}
