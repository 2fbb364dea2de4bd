package redfish

import (
	"context"
	"strings"

	"github.com/stmcginnis/gofish/redfish"
)

// Inventory reads a system's SMBIOS UUID and its NICs' MAC addresses (lower
// case, deduplicated, in the BMC's order) out of band, so that Anvil can
// match a machine known only by its BMC to the one that PXE-boots.
func Inventory(ctx context.Context, params map[string]string) (uuid string, macs []string, err error) {
	err = withSystem(ctx, params, "inventory", func(s *system) error {
		uuid = strings.ToLower(s.UUID)
		if s.nics == "" {
			return nil // a system without EthernetInterfaces: UUID only
		}
		links, err := memberLinks(s.GetClient(), s.nics)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, l := range links {
			nic, err := redfish.GetEthernetInterface(s.GetClient(), l)
			if err != nil {
				return err
			}
			mac := strings.ToLower(nic.MACAddress)
			if mac == "" {
				mac = strings.ToLower(nic.PermanentMACAddress)
			}
			if mac != "" && !seen[mac] {
				seen[mac] = true
				macs = append(macs, mac)
			}
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return uuid, macs, nil
}

// Inventory implements power.Inventorier.
func (Driver) Inventory(ctx context.Context, params map[string]string) (string, []string, error) {
	return Inventory(ctx, params)
}
