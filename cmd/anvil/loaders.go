package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// loaderFiles maps where Debian's packages put each boot loader to the name
// Anvil serves it under (DHCP hands these names out).
var loaderFiles = []struct{ from, to, pkg string }{
	{"/usr/lib/PXELINUX/lpxelinux.0", "lpxelinux.0", "pxelinux"},
	{"/usr/lib/syslinux/modules/bios/ldlinux.c32", "ldlinux.c32", "syslinux-common"},
	{"/usr/lib/syslinux/modules/bios/libcom32.c32", "libcom32.c32", "syslinux-common"},
	{"/usr/lib/syslinux/modules/bios/libutil.c32", "libutil.c32", "syslinux-common"},
	{"/usr/lib/syslinux/modules/bios/chain.c32", "chain.c32", "syslinux-common"},
	{"/usr/lib/ipxe/undionly.kpxe", "undionly.kpxe", "ipxe"},
	{"/usr/lib/ipxe/ipxe.efi", "ipxe.efi", "ipxe"},
	{"/usr/lib/ipxe/snponly.efi", "snponly.efi", "ipxe"},
	{"/usr/lib/shim/shimx64.efi.signed", "bootx64.efi", "shim-signed"},
	{"/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed", "grubx64.efi", "grub-efi-amd64-signed"},
}

func importLoadersCmd() *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "import-loaders",
		Short: "Copy boot loaders from Debian's packages (ipxe, pxelinux, syslinux-common, shim-signed, grub-efi-amd64-signed) into the boot directory",
		RunE: func(c *cobra.Command, _ []string) error {
			dst := filepath.Join(dir, "boot")
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			var missing []string
			for _, l := range loaderFiles {
				if err := copyFile(l.from, filepath.Join(dst, l.to)); err != nil {
					missing = append(missing, fmt.Sprintf("%s (package %s)", l.to, l.pkg))
					continue
				}
				fmt.Fprintf(c.OutOrStdout(), "imported %s from %s\n", l.to, l.from)
			}
			if len(missing) > 0 {
				return fmt.Errorf("not found, install the packages named: %v", missing)
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "data", "./anvil-data", "data directory (serve) or rack directory (rack)")
	return c
}

// copyFile copies atomically, so a rack serving the directory never sends
// half a loader.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(to), ".import-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), to)
}
