package rack

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// A rack's status report (rack/ op=report, every StatusEvery): what it
// is connected to and how its services are. The region shows it in
// rackcontrollers/ and on the controllers page.

// Status is one report.
type Status struct {
	Interfaces  []StatusInterface `json:"interfaces"`
	BMCNetworks []string          `json:"bmc_networks"`
	Services    []ServiceStatus   `json:"services"`
	// DNS are the addresses the rack answers DNS at now (a rack serving
	// on every address gains one with each interface it gets).
	DNS []string `json:"dns,omitempty"`
}

// StatusInterface is one of the rack host's network interfaces.
type StatusInterface struct {
	Name      string   `json:"name"`
	MAC       string   `json:"mac,omitempty"`
	MTU       int      `json:"mtu"`
	Up        bool     `json:"up"`
	Addresses []string `json:"addresses"` // CIDR, e.g. 192.0.2.1/24
}

// ServiceStatus is a service as MAAS's service_set shows it.
type ServiceStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Info   string `json:"status_info"`
}

// The services a rack reports, under MAAS's names where MAAS has them,
// and their states (MAAS's SERVICE_STATUS).
const (
	ServiceDHCP  = "dhcpd"
	ServiceTFTP  = "tftp"
	ServiceHTTP  = "http"
	ServiceDNS   = "dns_rack"
	ServicePower = "power"

	StatusRunning  = "running"
	StatusDegraded = "degraded"
	StatusDead     = "dead"
	StatusOff      = "off"
	StatusUnknown  = "unknown"
)

// Services are the services a rack reports, in the order shown.
var Services = []string{ServiceDHCP, ServiceTFTP, ServiceHTTP, ServiceDNS, ServicePower}

var serviceStates = []string{StatusRunning, StatusDegraded, StatusDead, StatusOff, StatusUnknown}

// Bounds on a report: a host with more than this is not a rack.
const (
	maxStatusBytes      = 64 << 10
	maxStatusInterfaces = 256
	maxStatusAddresses  = 64
	maxStatusNetworks   = 1024
)

// ParseStatus reads a report from a rack, refusing one that is malformed
// or out of bounds as a whole (the last good report stays).
func ParseStatus(b []byte) (Status, error) {
	var s Status
	if len(b) > maxStatusBytes {
		return s, fmt.Errorf("at most %d bytes", maxStatusBytes)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return Status{}, fmt.Errorf("not a status report: %v", err)
	}
	if len(s.Interfaces) > maxStatusInterfaces {
		return Status{}, fmt.Errorf("at most %d interfaces", maxStatusInterfaces)
	}
	for i := range s.Interfaces {
		if err := checkInterface(&s.Interfaces[i]); err != nil {
			return Status{}, fmt.Errorf("interface %d: %w", i, err)
		}
	}
	if len(s.BMCNetworks) > maxStatusNetworks {
		return Status{}, fmt.Errorf("at most %d BMC networks", maxStatusNetworks)
	}
	for i, n := range s.BMCNetworks {
		p, err := netip.ParsePrefix(n)
		if err != nil {
			return Status{}, fmt.Errorf("BMC network %q: not a CIDR", truncate(n, 50))
		}
		s.BMCNetworks[i] = p.Masked().String()
	}
	seen := map[string]bool{}
	for _, sv := range s.Services {
		if !slices.Contains(Services, sv.Name) || seen[sv.Name] {
			return Status{}, fmt.Errorf("service %q: unknown or given twice", truncate(sv.Name, 30))
		}
		if !slices.Contains(serviceStates, sv.Status) {
			return Status{}, fmt.Errorf("service %s: status must be one of %s", sv.Name, strings.Join(serviceStates, ", "))
		}
		seen[sv.Name] = true
	}
	for i := range s.Services {
		s.Services[i].Info = truncate(s.Services[i].Info, 300)
	}
	return s, nil
}

func checkInterface(i *StatusInterface) error {
	if i.Name == "" || len(i.Name) > 64 || strings.ContainsFunc(i.Name, func(r rune) bool { return r <= ' ' || r > '~' || r == '/' }) {
		return fmt.Errorf("name %q is not an interface name", truncate(i.Name, 70))
	}
	if i.MAC != "" {
		hw, err := net.ParseMAC(i.MAC)
		if err != nil {
			return fmt.Errorf("%s: MAC %q is not a MAC address", i.Name, truncate(i.MAC, 30))
		}
		i.MAC = hw.String()
	}
	if i.MTU < 0 || i.MTU > 65536 {
		return fmt.Errorf("%s: MTU %d out of range", i.Name, i.MTU)
	}
	if len(i.Addresses) > maxStatusAddresses {
		return fmt.Errorf("%s: at most %d addresses", i.Name, maxStatusAddresses)
	}
	for k, a := range i.Addresses {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return fmt.Errorf("%s: address %q is not in CIDR form", i.Name, truncate(a, 50))
		}
		i.Addresses[k] = p.String()
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
