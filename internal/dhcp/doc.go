// Package dhcp is Anvil's DHCPv4 server: the address and boot-file
// service that MAAS delegates to ISC dhcpd, written as a short chain of
// small handlers in the style of CoreDHCP so each concern can be read and
// tested alone:
//
//	validate -> selectSubnet -> leases -> boot -> commonOptions   (full mode)
//	validate -> proxyOnly    ->           boot -> commonOptions   (proxyDHCP)
//
// A Server holds a Config (subnets, static hosts, boot files) that can be
// swapped at run time, a LeaseStore that decides which client owns which
// address, and counters plus an Observer callback through which the rest of
// Anvil learns about every offer, ack, nak and drop:
//
//	store, _ := dhcp.OpenFileStore("/var/lib/anvil/dhcp-leases.jsonl")
//	srv, _ := dhcp.NewServer(cfg, store, dhcp.WithObserver(onEvent))
//	go srv.ListenAndServe("eth1")
//	...
//	srv.Reconfigure(newCfg) // at any time
//	srv.Stats()             // offers, acks, naks, drops by reason
//	srv.Close()
//
// Two servers may share a subnet (two racks on one VLAN): each hands out
// its own part of the dynamic ranges, knows the other's part
// (Subnet.Peer) and the other's leases (Server.SetPeerLeases), and
// confirms those to their clients when they rebind or reboot, while never
// offering the rest of the other's part (see peer.go).
//
// In proxyDHCP mode (Config.Proxy) the server hands out no addresses at all:
// it answers only PXE and UEFI HTTP clients with boot information, on ports
// 67 and 4011, for sites where another DHCP server owns the addresses.
package dhcp
