// Package pxetest proves network boot end to end: QEMU machines (TCG) with
// the iPXE ROM boot from Anvil's DHCP, HTTP and TFTP inside a network
// namespace, and reach an initramfs Anvil served.
package pxetest
