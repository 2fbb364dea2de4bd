package dhcp

import (
	"encoding/binary"
	"net"
	"strconv"
	"strings"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// BootFiles names what each kind of network-booting client is told to
// load. Values may contain {server} (the next-server address) and {mac}
// (the client's MAC, lower case with colons, as iPXE's ${mac} prints it),
// so the HTTP URLs follow the lead's HTTP server wherever it runs.
// Empty fields take the MAAS-like defaults below.
type BootFiles struct {
	BIOS      string // legacy BIOS PXE (arch 0)
	EFIx64    string // x86-64 UEFI PXE (arch 7, 9)
	EFIARM64  string // ARM64 UEFI PXE (arch 11)
	HTTPx64   string // x86-64 UEFI HTTP boot (arch 15, 16)
	HTTPARM64 string // ARM64 UEFI HTTP boot (arch 19)
	// IPXE is the script URL for clients already running iPXE (user class
	// "iPXE" or option 175), so they fetch their config instead of looping
	// back into another iPXE download.
	IPXE string
}

// DefaultBootFiles mirrors what MAAS hands out from its rack controllers.
var DefaultBootFiles = BootFiles{
	BIOS:      "lpxelinux.0",
	EFIx64:    "bootx64.efi",
	EFIARM64:  "bootaa64.efi",
	HTTPx64:   "http://{server}:5248/bootx64.efi",
	HTTPARM64: "http://{server}:5248/bootaa64.efi",
	IPXE:      "http://{server}:5248/ipxe.cfg-{mac}",
}

func (b BootFiles) withDefaults() BootFiles {
	d := DefaultBootFiles
	for _, p := range []struct {
		dst *string
		def string
	}{
		{&b.BIOS, d.BIOS}, {&b.EFIx64, d.EFIx64}, {&b.EFIARM64, d.EFIARM64},
		{&b.HTTPx64, d.HTTPx64}, {&b.HTTPARM64, d.HTTPARM64}, {&b.IPXE, d.IPXE},
	} {
		if *p.dst == "" {
			*p.dst = p.def
		}
	}
	return b
}

// Client system architectures from option 93 (RFC 4578, IANA registry).
const (
	ArchBIOS      = 0
	ArchEFIIA32   = 6
	ArchEFIBC     = 7
	ArchEFIx64    = 9
	ArchEFIARM64  = 11
	ArchHTTPx86   = 15
	ArchHTTPx64   = 16
	ArchHTTPARM64 = 19
	ArchUnknown   = -1
)

// optIPXE is option 175, which iPXE sends with its feature flags; its mere
// presence marks an iPXE client even when the user class is missing.
const optIPXE = 175

// BootClient is what a request says about how the client boots.
type BootClient struct {
	PXE    bool // vendor class PXEClient or HTTPClient
	HTTP   bool // vendor class HTTPClient (UEFI HTTP boot)
	IPXE   bool // already running iPXE
	Arch   int  // option 93, else parsed from the vendor class, else ArchUnknown
	Vendor string
}

// classify reads options 60, 77, 93 and 175.
func classify(req *dhcpv4.DHCPv4) BootClient {
	c := BootClient{Arch: ArchUnknown, Vendor: req.ClassIdentifier()}
	c.HTTP = strings.HasPrefix(c.Vendor, "HTTPClient")
	c.PXE = c.HTTP || strings.HasPrefix(c.Vendor, "PXEClient")
	for _, uc := range req.UserClass() {
		if uc == "iPXE" {
			c.IPXE = true
		}
	}
	if req.Options.Has(dhcpv4.GenericOptionCode(optIPXE)) {
		c.IPXE = true
	}
	if v := req.Options.Get(dhcpv4.OptionClientSystemArchitectureType); len(v) >= 2 {
		// Several architectures may be listed; the first is the one running.
		c.Arch = int(binary.BigEndian.Uint16(v))
	} else if i := strings.Index(c.Vendor, ":Arch:"); i >= 0 && len(c.Vendor) >= i+11 {
		// "PXEClient:Arch:00007:UNDI:003016" carries it too, for ROMs that
		// omit option 93.
		if n, err := strconv.Atoi(c.Vendor[i+6 : i+11]); err == nil {
			c.Arch = n
		}
	}
	return c
}

// file picks the boot file template for c; "" means "no idea, send none".
func (b BootFiles) file(c BootClient) string {
	switch {
	case c.IPXE:
		return b.IPXE
	case c.HTTP || c.Arch == ArchHTTPx64 || c.Arch == ArchHTTPx86 || c.Arch == ArchHTTPARM64:
		if c.Arch == ArchHTTPARM64 || c.Arch == ArchEFIARM64 {
			return b.HTTPARM64
		}
		return b.HTTPx64
	}
	switch c.Arch {
	case ArchBIOS:
		return b.BIOS
	case ArchEFIBC, ArchEFIx64:
		return b.EFIx64
	case ArchEFIARM64:
		return b.EFIARM64
	}
	return ""
}

// expand fills in the {server} and {mac} placeholders.
func expand(tmpl string, server net.IP, mac net.HardwareAddr) string {
	return strings.NewReplacer("{server}", server.String(), "{mac}", mac.String()).Replace(tmpl)
}
