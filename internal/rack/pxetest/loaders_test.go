package pxetest

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/dhcp"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/testutil/diskimage"
)

// debianLoaders are the loaders this test boots through, from Debian's
// packages, under the names Anvil serves them as (see import-loaders).
var debianLoaders = map[string]string{
	"lpxelinux.0": "/usr/lib/PXELINUX/lpxelinux.0",
	"ldlinux.c32": "/usr/lib/syslinux/modules/bios/ldlinux.c32",
	"bootx64.efi": "/usr/lib/shim/shimx64.efi.signed",
	"grubx64.efi": "/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed",
}

// TestLocalBootThroughPXELINUXAndGRUB: the local-boot answers of the
// other two loaders Anvil serves reach the disk of a Deployed machine
// whose firmware boots the network first, and the enlistment environment
// never starts. BIOS: the firmware's PXE runs lpxelinux.0 (here the iPXE
// ROM, told by DHCP to load it as a server's vendor ROM would be), which
// reads pxelinux.cfg/01-<mac>. UEFI: OVMF's own PXE (no iPXE ROM) loads
// shim and GRUB, which reads grub/grub.cfg-<mac> and chainloads the ESP's
// loader.
func TestLocalBootThroughPXELINUXAndGRUB(t *testing.T) {
	for _, src := range debianLoaders {
		if _, err := os.Stat(src); err != nil {
			t.Skipf("%s is not installed (pxelinux, syslinux-common, shim-signed, grub-efi-amd64-signed)", src)
		}
	}
	s := newSiteWith(t, func(c *rack.Config, bootDir string) {
		for name, src := range debianLoaders {
			copyTo(t, src, filepath.Join(bootDir, name))
		}
		// What a non-iPXE BIOS PXE ROM is told (dhcp.DefaultBootFiles).
		c.DHCPBoot = dhcp.BootFiles{IPXE: dhcp.DefaultBootFiles.BIOS}
		// The rack's TFTP socket is in the test's namespace, its process
		// is not: per-transfer sockets would be opened outside.
		c.TFTPSinglePort = true
	}, "tap0", "tap1")
	biosDisk := copyDisk(t, firstOf(diskimage.Build(t)))
	efiDisk := espDisk(t)
	ctx := context.Background()
	macs := map[string]string{"pxelinux": "52:54:00:12:34:71", "grub": "52:54:00:12:34:72"}
	s.deployed(t, macs)
	for _, c := range []struct{ name, loader, fw, tap, disk, want, config string }{
		{"vm6", "pxelinux", "bios", "tap0", biosDisk, diskimage.Marker, "pxelinux.cfg/"},
		{"vm7", "grub", "efi", "tap1", efiDisk, uefiMarker, "grub"},
	} {
		m := s.machineWith(t, c.name, macs[c.loader], c.tap, c.fw, c.disk, c.fw == "efi")
		if err := m.PowerOn(); err != nil {
			t.Fatal(err)
		}
		out := waitSerial(t, m, c.want, 5*time.Minute)
		if strings.Contains(out, "ANVIL-BOOT-OK") {
			t.Fatalf("%s: the enlistment environment booted before the disk:\n%s", c.loader, tail([]byte(out), 3000))
		}
		m.Close()
		var seen []string
		deadline := time.Now().Add(30 * time.Second)
		for found := false; !found; {
			page, err := s.cl.QueryEvents(ctx, url.Values{"hostname": {"deployed-" + c.loader}, "limit": {"100"}})
			seen = seen[:0]
			for _, e := range page.Events {
				seen = append(seen, e.Description)
				found = found || err == nil && strings.Contains(e.Description, "purpose local") && strings.Contains(e.Description, c.config)
			}
			if !found && time.Now().After(deadline) {
				t.Fatalf("%s: no local answer for %s on the timeline:\n%s\nserial console:\n%s", c.loader, c.config,
					strings.Join(seen, "\n"), out[:min(len(out), 4000)])
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
}
