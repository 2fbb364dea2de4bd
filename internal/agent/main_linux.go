package agent

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// Main is /init: it sets the machine up, runs the agent and never returns.
// Whatever goes wrong ends in a power off; if even that fails it sleeps.
func Main() {
	power := MachinePower{}
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "%sFATAL: panic: %v\n", Prefix, p)
			_ = power.PowerOff()
		}
		for {
			time.Sleep(time.Hour)
		}
	}()
	SetupPID1(stderr)
	a := &Agent{Console: stderr, Power: power, PrepareRescue: PrepareRescueMachine,
		MountMemory: MountMemoryRoot, SwitchRoot: SwitchRootTo}
	a.Stage("kernel-to-agent", Uptime())
	if err := boot(a); err != nil {
		a.Logf("FATAL: %v", err)
		a.powerOff()
	}
}

func boot(a *Agent) error {
	a.Logf("starting (%s)", Arch())
	b, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		return err
	}
	if a.Cmdline, err = ParseCmdline(string(b)); err != nil {
		return err
	}
	a.Logf("cmdline %s", a.Cmdline)
	_ = a.timed("modules", func() error {
		n := LoadModules(ModulesList, ModulesDir, a.Logf)
		nics, ipmi := WaitForDevices(3 * time.Second)
		a.Logf("modules loaded=%d nics=%d ipmi=%v", n, nics, ipmi)
		return nil
	})
	ctx := context.Background()
	var lease *Lease
	err = a.timed("dhcp", func() (err error) {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		lease, err = BringUpNetwork(dctx, PhysicalNICs("/"), a.Cmdline.BootMAC, a.Logf)
		return err
	})
	if err != nil {
		return err
	}
	host := &Host{Root: "/", BootMAC: a.Cmdline.BootMAC}
	if host.BootMAC == "" {
		host.BootMAC = NormaliseMAC(lease.MAC)
	}
	_ = a.timed("bmc", func() error {
		b, err := host.ReadBMC(ctx)
		if b == nil {
			a.Logf("bmc none: %v", err)
		} else {
			a.Logf("bmc type=%s address=%s mac=%s", b.Type, b.Address, b.MAC)
		}
		return nil
	})
	a.Sys = host
	a.Client = &agentapi.Client{Base: a.Cmdline.URL, HTTP: &http.Client{Timeout: 60 * time.Second, Transport: fromAddress(lease.IP)}}
	a.Run(ctx)
	return nil
}
