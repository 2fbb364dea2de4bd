package dhcp

import (
	"net/netip"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// boot adds next-server and the boot file for network-booting clients,
// chosen by architecture, vendor class and user class (see BootFiles).
// Clients that are not network booting get nothing here.
func boot(req, resp *dhcpv4.DHCPv4, r *Request) bool {
	c := r.Boot
	if !c.PXE && !c.IPXE && c.Arch == ArchUnknown {
		return false
	}
	cfg := &r.cfg.cfg
	tmpl := cfg.Boot.file(c)
	if tmpl == "" {
		if cfg.Proxy {
			// A proxy reply without a boot file is useless to the client.
			return r.drop(DropUnknownArch)
		}
		return false
	}
	next := nextServer(cfg, r.ServerIP)
	f := expand(tmpl, next.AsSlice(), req.ClientHWAddr)
	resp.ServerIPAddr = next.AsSlice()
	if len(f) < 128 {
		// Old PXE ROMs read only the header field; option 67 carries URLs
		// too long for it.
		resp.BootFileName = f
	}
	resp.UpdateOption(dhcpv4.OptBootFileName(f))
	resp.UpdateOption(dhcpv4.OptTFTPServerName(next.String()))
	if c.HTTP {
		// UEFI HTTP boot ignores offers that do not echo its class.
		resp.UpdateOption(dhcpv4.OptClassIdentifier("HTTPClient"))
	}
	if c.IPXE && !cfg.Proxy {
		// iPXE's no-pxedhcp setting (option 175, sub-option 176): this
		// offer is all there is, so it need not wait seconds for a
		// ProxyDHCP offer before it requests the address.
		resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(optIPXE), []byte{176, 1, 1}))
	}
	r.Event.BootFile = f
	return false
}

func nextServer(cfg *Config, server netip.Addr) netip.Addr {
	if cfg.NextServer.IsValid() {
		return cfg.NextServer
	}
	return server
}
