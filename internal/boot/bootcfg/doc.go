// Package bootcfg knows the boot config file names that iPXE, GRUB and
// PXELINUX ask for (the same names MAAS serves, so existing firmware and
// DHCP setups keep working) and renders the configs themselves from
// embedded templates. It is pure: no network, no files, no clock, so the
// TFTP and HTTP servers can call it on every request and tests can cover
// every kind × purpose cheaply.
//
// Parse classifies a requested name; Render writes the config for one
// loader and one boot purpose; DefaultRequestFor names the default file a
// client falls back to, which is what a server answers for a machine it
// does not know (that is enlistment).
//
// Where kernels and initrds come from, per loader:
//   - iPXE is given absolute http:// or https:// URLs (iPXE fetches them
//     itself, fast, from the rack's HTTP server).
//   - GRUB is given either a path relative to the served root, rendered
//     "/path" on GRUB's $root (the TFTP or HTTP device GRUB itself came
//     from), or an http:// URL, rendered "(http,host:port)/path" so a GRUB
//     loaded over slow TFTP still fetches the big files over HTTP. GRUB has
//     no TLS, so https is refused rather than failing at boot time.
//   - PXELINUX is given either a relative path (relative to the directory
//     pxelinux.0 came from, which is the TFTP root in Anvil's layout) or an
//     http:// URL, which lpxelinux.0 fetches itself. No https, as for GRUB.
//
// Every value that reaches a config is validated for its syntax before
// rendering and checked again by the template as it is written (defence in
// depth: a template edit cannot silently drop the check). Kernel
// parameters in particular are refused, not escaped, when they hold
// anything a loader's parser would treat specially: a parameter that
// needs quoting is a bug upstream, and a refused config boots nothing
// instead of booting something an attacker wrote.
package bootcfg
