#!/bin/sh
# Builds the Debian root filesystem tarball Anvil deploys in its
# quickstart and tests: debian-rootfs.sh OUT.tgz (as root; needs
# debootstrap). SUITE and MIRROR may be set in the environment.
#
# The package list is what the deployed machine needs to boot from the
# tarball installer's ext4 root and answer on the network:
#   linux-image-amd64  kernel and initramfs in /boot (initramfs-tools)
#   extlinux           the boot loader the installer configures
#   systemd-sysv udev  init, device names, the serial getty
#   e2fsprogs          fsck of the root before it is remounted read-write
#   ifupdown isc-dhcp-client  the network cloud-init configures
#   cloud-init         reads the NoCloud seed (the CIDATA partition)
#   python3-cffi-backend  python3-cryptography needs it and debootstrap
#                      does not resolve the virtual package it depends on
#   openssh-server sudo  logging in as cloud-init's default user
#   grub2-common grub-pc-bin grub-efi-amd64-bin efibootmgr  the boot
#                      loader the installer puts on a laid-out disk, for
#                      BIOS and UEFI, and the firmware's boot entry
#   mdadm lvm2         RAID and LVM in the initramfs and the booted system
#   ifenslave vlan bridge-utils  bonds, VLANs and bridges under ifupdown,
#                      which cloud-init renders the network config for
#   resolvconf         puts the nameservers and search domains of that
#                      config (dns-nameservers) into /etc/resolv.conf;
#                      without it ifupdown ignores them
set -eu
out=$1
suite=${SUITE:-bookworm}
mirror=${MIRROR:-http://deb.debian.org/debian}
packages=linux-image-amd64,extlinux,systemd-sysv,udev,e2fsprogs,ifupdown,isc-dhcp-client,cloud-init,python3-cffi-backend,openssh-server,sudo,grub2-common,grub-pc-bin,grub-efi-amd64-bin,efibootmgr,mdadm,lvm2,ifenslave,vlan,bridge-utils,resolvconf

root=$(mktemp -d /var/tmp/anvil-debian-rootfs.XXXXXX)
# mktemp makes it 0700, and the tarball's ./ becomes the installed /:
# no user but root could reach anything (sshd reads authorized_keys as
# the user).
chmod 755 "$root"
cleanup() {
	for m in proc sys dev/pts dev; do umount "$root/$m" 2>/dev/null || true; done
	rm -rf "$root"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror"

# Small: no documentation, translations or package lists. Per machine:
# an empty machine-id (systemd makes one at first boot) and no SSH host
# keys (cloud-init makes them).
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
	"$root"/usr/share/locale/* "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* \
	"$root"/var/cache/debconf/*-old "$root"/var/log/*.log "$root"/etc/ssh/ssh_host_*
: >"$root/etc/machine-id"
echo debian >"$root/etc/hostname"
chmod 644 "$root/etc/hostname"
# C.UTF-8 comes with libc; cloud-init's default (en_US.UTF-8) would need
# locale-gen, which on Debian generates only what /etc/locale.gen names,
# and its locale module would fail.
echo LANG=C.UTF-8 >"$root/etc/default/locale"
echo "locale: C.UTF-8" >"$root/etc/cloud/cloud.cfg.d/01-anvil-locale.cfg"

tar -C "$root" --numeric-owner --xattrs --xattrs-include='*' -czf "$out.part" .
mv "$out.part" "$out"
