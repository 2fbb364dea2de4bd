package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/anvilmetal/anvil/internal/store"
)

// siteFacts is what a site needs before a machine can enlist, commission
// and deploy, as far as this process can tell.
type siteFacts struct {
	// BootDir is the boot directory of the rack in this process; empty
	// when there is none (a rack elsewhere keeps its own files).
	BootDir string
	// MissingLoaders and MissingEnv are the files of BootDir not there.
	MissingLoaders, MissingEnv []string
	Subnets                    []store.Subnet
	Ranges                     []store.IPRange
	Images                     []string // deployable
}

// gap is one thing the site lacks, and how to add it: a command to run or
// a page to use.
type gap struct {
	What    string
	Command string // a shell command to run, if one adds it
	Page    string // the page that adds it, if one does
	How     string // words after the command, or after the page without one
}

// bootLoaders are the loaders DHCP hands out (BIOS PXE, UEFI) and what
// the first of them loads next.
var bootLoaders = []string{"lpxelinux.0", "ldlinux.c32", "bootx64.efi", "grubx64.efi"}

// ephemeralFiles are the enlistment and commissioning environment.
var ephemeralFiles = []string{"ephemeral/vmlinuz", "ephemeral/initrd.img"}

// siteGaps lists what the site lacks, in the order an operator adds it.
func siteGaps(f siteFacts) []gap {
	var out []gap
	data := filepath.Dir(f.BootDir)
	if len(f.MissingLoaders) > 0 {
		out = append(out, gap{
			What:    "No boot loaders (" + strings.Join(f.MissingLoaders, ", ") + "): machines cannot network-boot.",
			Command: "apt-get install ipxe pxelinux syslinux-common shim-signed grub-efi-amd64-signed && anvil import-loaders --data " + data,
		})
	}
	if len(f.MissingEnv) > 0 {
		out = append(out, gap{
			What:    "No ephemeral environment (" + strings.Join(f.MissingEnv, ", ") + "): machines cannot enlist or commission.",
			Command: "go run ./cmd/anvil-ephemeral -out " + filepath.Join(f.BootDir, "ephemeral"),
			How:     "in Anvil's source tree (it needs Debian's linux-image-amd64).",
		})
	}
	served := map[int64]bool{}
	for _, s := range f.Subnets {
		if s.DHCP {
			served[s.ID] = true
		}
	}
	pooled := false
	for _, r := range f.Ranges {
		if served[r.SubnetID] && r.Type == "dynamic" {
			pooled = true
		}
	}
	switch {
	case len(served) == 0:
		out = append(out, gap{
			What:    "No subnet with DHCP on: Anvil hands out no addresses, so nothing boots from it.",
			Command: "anvil subnets create 192.0.2.0/24 --gateway 192.0.2.1 --dhcp",
			Page:    "/MAAS/settings",
			How:     "with your network's CIDR and gateway, and a rack serving DHCP on it (--dhcp-interface).",
		})
	case !pooled:
		out = append(out, gap{
			What:    "No dynamic range on a DHCP subnet: DHCP has no addresses to hand out.",
			Command: "anvil ipranges create 192.0.2.100 192.0.2.199",
			Page:    "/MAAS/settings",
			How:     "with addresses of your DHCP subnet.",
		})
	}
	if len(f.Images) == 0 {
		out = append(out, gap{
			What: "No images: machines can commission but not deploy.",
			Page: "/MAAS/settings",
			How:  "upload a raw or compressed disk image or a root tarball, or with the maas CLI: boot-resources create name=custom/NAME architecture=amd64/generic filetype=ddraw content@=image.raw",
		})
	}
	return out
}

// siteFacts reads the facts: the boot directory's files and the store.
func (s *Server) siteFacts(ctx context.Context, images []string) (siteFacts, error) {
	f := siteFacts{BootDir: s.opts.BootDir, Images: images}
	if f.BootDir != "" {
		f.MissingLoaders, f.MissingEnv = missingFiles(f.BootDir, bootLoaders), missingFiles(f.BootDir, ephemeralFiles)
	}
	var err error
	if f.Subnets, err = s.store.ListSubnets(ctx); err != nil {
		return f, fmt.Errorf("site check: %w", err)
	}
	if f.Ranges, err = s.store.ListIPRanges(ctx); err != nil {
		return f, fmt.Errorf("site check: %w", err)
	}
	return f, nil
}

func missingFiles(dir string, names []string) []string {
	var out []string
	for _, n := range names {
		if st, err := os.Stat(filepath.Join(dir, n)); err != nil || st.Size() == 0 {
			out = append(out, n)
		}
	}
	return out
}
