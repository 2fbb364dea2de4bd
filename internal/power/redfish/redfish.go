// Package redfish is the "redfish" power driver: it speaks DMTF Redfish to
// a BMC with gofish. Each operation opens its own connection with basic
// auth (as MAAS does), so no session is left behind on the BMC when ctx
// ends mid-operation, and carries out one action without verifying it:
// power.Carry verifies with back-off.
//
// Power parameters (MAAS's names):
//
//	power_address     host, host:port, or an https:// or http:// URL; https and port 443 by default
//	power_user        BMC user (empty: the service needs no authentication)
//	power_pass        BMC password; never appears in errors
//	node_id           the ComputerSystem: its Id ("1") or @odata.id ("/redfish/v1/Systems/1");
//	                  may be left out only when the service lists exactly one system
//	power_verify_tls  "true" (default) verifies the BMC's certificate against the system's
//	                  roots; "false" is the explicit per-machine opt-out for factory
//	                  self-signed certificates
//	power_boot_type   "auto" (default: keep the BMC's boot mode unless UEFI is asked for),
//	                  "efi" or "legacy" to force the override's mode
//
// Power states: On and PoweringOn read as on; Off as off; PoweringOff reads
// as on, since the OS may still be shutting down and power is not yet cut,
// so a soft off is verified only once the system is really off; Paused
// reads as on (power is applied).
package redfish

import (
	"context"
	"fmt"

	"github.com/stmcginnis/gofish/redfish"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
)

// Driver is the redfish power type. The zero value is ready to use.
type Driver struct{}

var _ power.Driver = Driver{}

func (Driver) Name() string { return "redfish" }

// Validate checks the parameters without contacting the BMC.
func (Driver) Validate(p map[string]string) error {
	_, err := parse(p)
	return err
}

// BMC is the service endpoint; node_id tells systems behind it apart, so
// that commands for a chassis's systems are serialised on one key.
func (Driver) BMC(p map[string]string) (power.BMC, error) {
	pp, err := parse(p)
	if err != nil {
		return power.BMC{}, &power.Error{Kind: power.BadParams, Op: "bmc", Err: err}
	}
	return power.BMC{Type: "redfish", Address: pp.endpoint, System: pp.nodeID}, nil
}

// PowerOn sends On (or ForceOn where only that is offered) to a system
// that is off. A system that is on or powering on is left alone: some BMCs
// refuse On when on, and none may be reset by a plain power on.
func (Driver) PowerOn(ctx context.Context, p map[string]string) error {
	return withSystem(ctx, p, "power on", func(s *system) error {
		switch s.PowerState {
		case redfish.OnPowerState, redfish.PoweringOnPowerState:
			return nil
		}
		return s.reset(redfish.OnResetType, redfish.ForceOnResetType)
	})
}

// PowerOff sends GracefulShutdown (soft) or ForceOff (hard). A system
// already off is left alone, and so is one already shutting down when a
// soft off is asked for.
func (Driver) PowerOff(ctx context.Context, p map[string]string, soft bool) error {
	op := "power off"
	if soft {
		op = "soft power off"
	}
	return withSystem(ctx, p, op, func(s *system) error {
		switch {
		case s.PowerState == redfish.OffPowerState:
			return nil
		case soft && s.PowerState == redfish.PoweringOffPowerState:
			return nil
		case soft:
			return s.reset(redfish.GracefulShutdownResetType)
		}
		return s.reset(redfish.ForceOffResetType)
	})
}

// PowerCycle restarts a system that is on: PowerCycle where the system
// offers it (power really goes away), else ForceRestart. A system that is
// off is powered on instead, which is what a cycle means to the caller.
func (Driver) PowerCycle(ctx context.Context, p map[string]string) error {
	return withSystem(ctx, p, "power cycle", func(s *system) error {
		if s.PowerState == redfish.OffPowerState {
			return s.reset(redfish.OnResetType, redfish.ForceOnResetType)
		}
		return s.reset(redfish.PowerCycleResetType, redfish.ForceRestartResetType)
	})
}

// Query reads the system's PowerState (see the package comment for the
// mapping).
func (Driver) Query(ctx context.Context, p map[string]string) (machine.PowerState, error) {
	st := machine.PowerUnknown
	err := withSystem(ctx, p, "query", func(s *system) error {
		switch s.PowerState {
		case redfish.OnPowerState, redfish.PoweringOnPowerState, redfish.PoweringOffPowerState, redfish.PausedPowerState:
			st = machine.PowerOn
		case redfish.OffPowerState:
			st = machine.PowerOff
		default:
			return &power.Error{Kind: power.BMCError, Op: "query", Err: fmt.Errorf("system %s reports unknown PowerState %q", s.ID, s.PowerState)}
		}
		return nil
	})
	if err != nil {
		return machine.PowerUnknown, err
	}
	return st, nil
}

// SetBootDevice sets the boot source override: Pxe or Hdd, Once or
// Continuous, and the mode as power_boot_type says.
func (Driver) SetBootDevice(ctx context.Context, p map[string]string, dev power.BootDevice) error {
	var target redfish.BootSourceOverrideTarget
	switch dev.Device {
	case "network":
		target = redfish.PxeBootSourceOverrideTarget
	case "disk":
		target = redfish.HddBootSourceOverrideTarget
	default:
		return &power.Error{Kind: power.BadParams, Op: "set boot device", Err: fmt.Errorf("unknown boot device %q (want network or disk)", dev.Device)}
	}
	return withSystem(ctx, p, "set boot device", func(s *system) error {
		return s.setBoot(target, dev)
	})
}
