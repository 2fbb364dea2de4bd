// Package ipmi is the "ipmi" power driver: it speaks IPMI 2.0 over RMCP+
// (lanplus) or IPMI 1.5 (lan) natively with github.com/bougou/go-ipmi; no
// ipmitool at run time. Each operation opens a session, does one thing and
// closes the session, because BMCs have only a few session slots and a
// session left open blocks the next login until it times out. Actions are
// not verified here: power.Carry queries with back-off.
//
// Power parameters (MAAS's names):
//
//	power_address    host, host:port, IPv6 address, [v6] or [v6]:port; port 623 by default
//	power_user       BMC user; empty logs in anonymously (no user, no password),
//	                 where the BMC allows it
//	power_pass       BMC password; never appears in errors
//	power_driver     LAN_2_0 (default: IPMI 2.0 lanplus) or LAN (IPMI 1.5)
//	power_boot_type  auto (default: EFI when the machine boots EFI), efi or legacy
//	mac_address      the BMC's MAC; informational, checked when given
//	cipher_suite_id  RMCP+ cipher suite (alias cipher_suite); default 17, then 3
//	privilege_level  ADMIN (default) or OPERATOR
//	k_g              must be empty: go-ipmi cannot do two-key logins
//	workaround_flags MAAS's FreeIPMI workarounds; accepted and ignored
//
// Retries: go-ipmi sends a request again when no answer comes within
// Driver.Timeout, Driver.Retries times; ctx's deadline bounds the whole
// operation and every wait.
package ipmi

import (
	"context"
	"fmt"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/chassis"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
)

// Driver is the ipmi power type. The zero value is ready to use.
type Driver struct {
	// Timeout is how long each request waits for its answer before it is
	// sent again; 0 means 1 s for lanplus and 2 s for IPMI 1.5, as
	// ipmitool does.
	Timeout time.Duration
	// Retries is how many times an unanswered request is sent again; 0
	// means 4 (ipmitool's default), negative means never.
	Retries int
	// LoginTimeout is how long each login request waits before it is sent
	// again (once); 0 means 3 s, or Timeout and Retries when either is
	// set. Logins wait longer than commands by default: a BMC opens a
	// session for every Open Session Request it receives, so resending one
	// that was merely slow (a busy BMC can take over a second) leaves a
	// second session behind until the BMC evicts it, and BMCs have few
	// session slots.
	LoginTimeout time.Duration
}

var _ power.Driver = Driver{}

func (Driver) Name() string { return "ipmi" }

// Validate checks the parameters without contacting the BMC.
func (Driver) Validate(p map[string]string) error {
	_, err := parse(p)
	return err
}

// BMC is host:port with the port always present. Plain IPMI fronts one
// system, so System is empty.
func (Driver) BMC(p map[string]string) (power.BMC, error) {
	pp, err := parse(p)
	if err != nil {
		return power.BMC{}, &power.Error{Kind: power.BadParams, Op: "bmc", Err: err}
	}
	return power.BMC{Type: "ipmi", Address: pp.address()}, nil
}

// PowerOn sends chassis control "power up", which real BMCs ignore for a
// machine that is on; it never cycles.
func (d Driver) PowerOn(ctx context.Context, p map[string]string) error {
	return d.do(ctx, p, "power on", func(ctx context.Context, c *client.Client, _ params) error {
		return control(ctx, c, chassis.ChassisControlPowerUp, true)
	})
}

// PowerOff sends "power down" (hard) or "soft shutdown" (ACPI power button).
func (d Driver) PowerOff(ctx context.Context, p map[string]string, soft bool) error {
	op, action := "power off", chassis.ChassisControlPowerDown
	if soft {
		op, action = "soft power off", chassis.ChassisControlSoftShutdown
	}
	return d.do(ctx, p, op, func(ctx context.Context, c *client.Client, _ params) error {
		return control(ctx, c, action, false)
	})
}

// PowerCycle restarts a machine that is on with "power cycle". The spec
// recommends that BMCs ignore a cycle of a machine that is off, or refuse
// it (D5h), and many do; so a machine found off is powered up instead,
// which is what a cycle means to the caller. The state is read first, and
// again if the cycle is refused, in case it went off in between.
func (d Driver) PowerCycle(ctx context.Context, p map[string]string) error {
	return d.do(ctx, p, "power cycle", func(ctx context.Context, c *client.Client, _ params) error {
		on, err := status(ctx, c)
		if err != nil {
			return err
		}
		if !on {
			return control(ctx, c, chassis.ChassisControlPowerUp, true)
		}
		_, err = c.ChassisControl(ctx, chassis.ChassisControlPowerCycle)
		if _, refused := types.IsResponseError(err); refused {
			if on, qerr := status(ctx, c); qerr == nil && !on {
				return control(ctx, c, chassis.ChassisControlPowerUp, true)
			}
		}
		return err
	})
}

// Query reads Get Chassis Status.
func (d Driver) Query(ctx context.Context, p map[string]string) (machine.PowerState, error) {
	st := machine.PowerUnknown
	err := d.do(ctx, p, "query", func(ctx context.Context, c *client.Client, _ params) error {
		on, err := status(ctx, c)
		if err != nil {
			return err
		}
		st = machine.PowerOff
		if on {
			st = machine.PowerOn
		}
		return nil
	})
	if err != nil {
		return machine.PowerError, err
	}
	return st, nil
}

// SystemGUID reads Get System GUID: the 16 bytes as the BMC sent them
// (machine.GUIDAsUUID reads them), so Anvil can tell whether a booted
// system is the one behind this BMC.
func (d Driver) SystemGUID(ctx context.Context, p map[string]string) ([]byte, error) {
	var out []byte
	err := d.do(ctx, p, "get system guid", func(ctx context.Context, c *client.Client, _ params) error {
		r, err := c.GetSystemGUID(ctx)
		if err != nil {
			return err
		}
		out = r.GUID[:]
		return nil
	})
	return out, err
}

// SetBootDevice sets the boot flags (Set System Boot Options parameter 5):
// PXE or hard disk, persistent or the next boot only, and the EFI bit when
// the machine boots EFI or power_boot_type says efi (legacy clears it).
func (d Driver) SetBootDevice(ctx context.Context, p map[string]string, dev power.BootDevice) error {
	var sel types.BootDeviceSelector
	switch dev.Device {
	case "network":
		sel = types.BootDeviceSelectorForcePXE
	case "disk":
		sel = types.BootDeviceSelectorForceHardDrive
	default:
		return &power.Error{Kind: power.BadParams, Op: "boot device", Err: fmt.Errorf("unknown boot device %q (network or disk)", dev.Device)}
	}
	return d.do(ctx, p, "boot device", func(ctx context.Context, c *client.Client, pp params) error {
		efi := dev.EFI
		switch pp.bootType {
		case "efi":
			efi = true
		case "legacy":
			efi = false
		}
		return c.SetSystemBootOptionsParamFor(ctx, &types.BootOptionParam_BootFlags{
			BootFlagsValid:     true,
			Persist:            dev.Persistent,
			BIOSBootType:       types.BIOSBootType(efi),
			BootDeviceSelector: sel,
		})
	})
}

// control sends one chassis control action. Some BMCs refuse "power up"
// for a machine that is on (or "power down" for one that is off) with a
// completion code; if the machine is already where it should be, that is
// success.
func control(ctx context.Context, c *client.Client, action chassis.ChassisControl, wantOn bool) error {
	_, err := c.ChassisControl(ctx, action)
	if re, refused := types.IsResponseError(err); refused && re.CompletionCode() != types.CodeInsufficientPrivilege {
		if on, qerr := status(ctx, c); qerr == nil && on == wantOn {
			return nil
		}
	}
	return err
}

func status(ctx context.Context, c *client.Client) (bool, error) {
	st, err := c.GetChassisStatus(ctx)
	if err != nil {
		return false, err
	}
	return st.PowerIsOn, nil
}
