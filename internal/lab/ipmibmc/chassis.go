package ipmibmc

import (
	"context"
	"time"

	"github.com/bougou/go-ipmi/pkg/hal"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/anvilmetal/anvil/internal/lab"
)

// machineHAL is go-ipmi's hardware abstraction for one lab machine: a
// chassis and nothing else (no sensors, FRU, SDR, NIC settings or serial
// console); go-ipmi's handlers answer commands for absent parts with
// "not supported".
type machineHAL struct{ ch *chassis }

func (h machineHAL) Chassis() hal.ChassisHAL { return h.ch }
func (machineHAL) Sensors() hal.SensorHAL    { return nil }
func (machineHAL) Storage() hal.StorageHAL   { return nil }
func (machineHAL) Network() hal.NetworkHAL   { return nil }
func (machineHAL) GPIO() hal.GPIOHAL         { return nil }
func (machineHAL) I2C() hal.I2CHAL           { return nil }
func (machineHAL) Console() hal.ConsoleHAL   { return nil }
func (machineHAL) Close() error              { return nil }

// chassis maps go-ipmi's chassis calls onto the machine and logs each.
type chassis struct {
	m   lab.Machine
	log *lab.Log
}

var _ hal.ChassisHAL = (*chassis)(nil)

func (c *chassis) run(command string, f func() error) error {
	start := time.Now()
	err := f()
	if c.log != nil {
		c.log.Record(lab.LogEntry{Machine: c.m.ID(), Command: command, Start: start, End: time.Now()})
	}
	return err
}

func (c *chassis) PowerState(context.Context) (bool, error) {
	var on bool
	err := c.run("status", func() error { on = c.m.IsOn(); return nil })
	return on, err
}

func (c *chassis) SetPower(_ context.Context, on bool) error {
	if on {
		return c.run("power on", c.m.PowerOn)
	}
	return c.run("power off", func() error { return c.m.PowerOff(false) })
}

// PowerCycle refuses a machine that is off with D5h ("not supported in
// present state"), as the spec recommends and many real BMCs do, so that
// clients' fallbacks get exercised.
func (c *chassis) PowerCycle(context.Context) error {
	return c.run("power cycle", func() error {
		if !c.m.IsOn() {
			return types.CodeNotSupported
		}
		return c.m.PowerCycle()
	})
}

// ColdReset is chassis control "hard reset": a restart without the power
// going away, which for a lab machine is a cycle.
func (c *chassis) ColdReset(context.Context) error {
	return c.run("hard reset", func() error {
		if !c.m.IsOn() {
			return types.CodeNotSupported
		}
		return c.m.PowerCycle()
	})
}

// WarmReset is what go-ipmi calls for chassis control "soft shutdown"
// (the ACPI power button).
func (c *chassis) WarmReset(context.Context) error {
	return c.run("soft off", func() error { return c.m.PowerOff(true) })
}

func (c *chassis) Identify(context.Context, uint8) error {
	return c.run("identify", func() error { return nil })
}

func (c *chassis) IntrusionState(context.Context) (bool, error) { return false, hal.ErrNotSupported }

// SetBootFlags takes PXE and hard disk; "no override" means the machine's
// normal order, which for a lab machine is its disk. Other devices (CD,
// BIOS setup, floppy) do not exist here and are refused with 80h.
func (c *chassis) SetBootFlags(_ context.Context, f *types.BootOptionParam_BootFlags) error {
	return c.run("boot device", func() error {
		if f == nil || !f.BootFlagsValid {
			return nil // flags marked invalid carry no request
		}
		var dev string
		switch f.BootDeviceSelector {
		case types.BootDeviceSelectorForcePXE:
			dev = "network"
		case types.BootDeviceSelectorForceHardDrive, types.BootDeviceSelectorForceHardDriveSafe, types.BootDeviceSelectorNoOverride:
			dev = "disk"
		default:
			return hal.ErrNotSupported
		}
		return c.m.SetBootDevice(dev, f.Persist, bool(f.BIOSBootType))
	})
}

func (c *chassis) GetBootFlags(context.Context) (*types.BootOptionParam_BootFlags, error) {
	f := &types.BootOptionParam_BootFlags{BootFlagsValid: true}
	err := c.run("get boot device", func() error {
		dev, persistent, efi := c.m.BootDevice()
		f.Persist, f.BIOSBootType = persistent, types.BIOSBootType(efi)
		f.BootDeviceSelector = types.BootDeviceSelectorForceHardDrive
		if dev == "network" {
			f.BootDeviceSelector = types.BootDeviceSelectorForcePXE
		}
		return nil
	})
	return f, err
}

// The boot info acknowledge bits (which firmware stage saw the flags) are
// accepted and forgotten: ipmitool's bootdev writes them before the flags.
func (c *chassis) SetBootInfoAcknowledge(context.Context, *types.BootOptionParam_BootInfoAcknowledge) error {
	return nil
}

func (c *chassis) GetBootInfoAcknowledge(context.Context) (*types.BootOptionParam_BootInfoAcknowledge, error) {
	return &types.BootOptionParam_BootInfoAcknowledge{}, nil
}
