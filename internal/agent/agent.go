// Package agent is Anvil's ephemeral environment: the program that runs as
// /init of the initramfs Anvil network-boots machines into. It brings up
// the network, tells the region who the machine is (agentapi), and does
// what the region answers: enlist, run a phase such as commissioning,
// reboot or power off.
//
// The flow (Agent.Run) is independent of the machine it runs on: the
// system (identity, inventory) and the power actions are interfaces, so it
// runs in tests against an httptest region.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/scripts"
)

// Files in the initramfs, shared with the builder.
const (
	ModulesDir  = "/lib/modules"             // kernel modules, <name>.ko
	ModulesList = "/lib/modules/anvil.order" // module file names, one a line, in load order
)

// Prefix starts every console line the agent prints.
const Prefix = "anvil-agent: "

// Power is what the agent does to the machine at the end.
type Power interface {
	PowerOff() error
	Reboot() error
}

// System is the machine the agent describes.
type System interface {
	Identity(ctx context.Context) agentapi.Identity
	// Inventory returns the structured inventory and the raw files it was
	// read from.
	Inventory(ctx context.Context) (*machine.Inventory, map[string][]byte)
}

// Phase runs one phase after the region answered proceed. The agent powers
// the machine off afterwards; an error is signalled as FAILED.
type Phase func(ctx context.Context, a *Agent, r agentapi.HelloResponse) error

// Phases are the phases the environment can run.
var Phases = map[string]Phase{
	agentapi.PhaseCommissioning: Commission,
	agentapi.PhaseTesting:       Test,
	agentapi.PhaseDeploying:     Deploy,
	agentapi.PhaseDiskErasing:   Erase,
	agentapi.PhaseReleasing:     Release,
	agentapi.PhaseRescue:        Rescue,
}

// Agent runs the flow once.
type Agent struct {
	Cmdline Cmdline
	Client  *agentapi.Client
	Sys     System
	Power   Power
	Console io.Writer

	RetryFor     time.Duration // how long calls are retried; default 10 minutes
	Backoff      time.Duration // first retry delay, doubling to MaxBackoff; default 1s
	MaxBackoff   time.Duration // default 30s
	BMCResetWait time.Duration // how long to wait for the region's BMC reboot; default 3 minutes
	// ScriptReportEvery is how often a running script's output is sent;
	// default 2 seconds.
	ScriptReportEvery time.Duration
	Phases            map[string]Phase // default Phases

	// RescueAddr is where rescue mode's SSH server listens; default
	// DefaultRescueAddr.
	RescueAddr string
	// PrepareRescue, when set, readies the machine for rescue shells
	// (PrepareRescueMachine mounts /dev/pts).
	PrepareRescue func() error

	// MemoryRoot is where a deployment to memory is unpacked (default
	// DefaultMemoryRoot); MountMemory, when set, mounts a tmpfs there, and
	// SwitchRoot boots it (nil: this environment cannot).
	MemoryRoot  string
	MountMemory func(dir string) error
	SwitchRoot  func(root, init string) error

	// BlockDir and DevDir are where the disks are listed (sysfs) and
	// opened; defaults /sys/block and /dev.
	BlockDir, DevDir string

	// rebootAfter, set by a phase, ends it with a reboot, not a power off.
	rebootAfter bool
	// waitBMC, with rebootAfter, waits for the region's reboot through the
	// BMC before rebooting by itself.
	waitBMC bool
	// id is what the machine said of itself in its hello.
	id agentapi.Identity

	mu     sync.Mutex
	stages []string
}

// Logf prints one console line.
func (a *Agent) Logf(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(a.Console, Prefix+format+"\n", args...)
}

// Stage records how long a stage took, for the closing stage line.
func (a *Agent) Stage(name string, d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stages = append(a.stages, fmt.Sprintf("%s=%dms", name, d.Milliseconds()))
}

// timed runs fn and records its duration as stage name.
func (a *Agent) timed(name string, fn func() error) error {
	start := time.Now()
	err := fn()
	a.Stage(name, time.Since(start))
	return err
}

func (a *Agent) printStages() {
	a.mu.Lock()
	line := strings.Join(a.stages, " ")
	a.mu.Unlock()
	a.Logf("stage %s", line)
}

func (a *Agent) defaults() {
	if a.RetryFor == 0 {
		a.RetryFor = 10 * time.Minute
	}
	if a.Backoff == 0 {
		a.Backoff = time.Second
	}
	if a.MaxBackoff == 0 {
		a.MaxBackoff = 30 * time.Second
	}
	if a.BMCResetWait == 0 {
		a.BMCResetWait = 3 * time.Minute
	}
	if a.Phases == nil {
		a.Phases = Phases
	}
	if a.Console == nil {
		a.Console = io.Discard
	}
	if a.BlockDir == "" {
		a.BlockDir = "/sys/block"
	}
	if a.DevDir == "" {
		a.DevDir = "/dev"
	}
}

// Run says hello and does what the region answers, ending with a power
// action. Run returns only after that action (which, on a real machine,
// does not return), or when ctx ends; errors are handled here (signalled
// when the agent has a token, then power off).
func (a *Agent) Run(ctx context.Context) {
	a.defaults()
	defer func() {
		if p := recover(); p != nil {
			a.fail(ctx, fmt.Errorf("panic: %v", p))
		}
	}()
	if err := a.run(ctx); err != nil {
		a.fail(ctx, err)
	}
}

func (a *Agent) run(ctx context.Context) error {
	id := a.Sys.Identity(ctx)
	id.Seen = a.Cmdline.Seen
	a.id = id
	bmc := "none"
	if id.BMC != nil {
		bmc = fmt.Sprintf("%s/%s", id.BMC.Address, id.BMC.MAC)
	}
	a.Logf("identity macs=%s boot_mac=%s uuid=%s arch=%s firmware=%s bmc=%s",
		strings.Join(id.MACs, ","), id.BootMAC, id.UUID, id.Arch, id.Firmware, bmc)
	var resp agentapi.HelloResponse
	err := a.timed("hello", func() error {
		return a.retry(ctx, "hello", func(ctx context.Context) (err error) {
			resp, err = a.Client.Hello(ctx, agentapi.HelloRequest{Identity: id, Purpose: a.Cmdline.Purpose, Enrol: a.Cmdline.Enrol})
			return err
		})
	})
	if err != nil {
		return err
	}
	a.Logf("hello action=%s system_id=%s hostname=%s phase=%s%s", resp.Action, resp.SystemID, resp.Hostname, resp.Phase, message(resp))
	if resp.Action == agentapi.ActionEnlist {
		if resp, err = a.enlist(ctx, id, resp.BMCUser); err != nil {
			return err
		}
	}
	return a.act(ctx, resp)
}

func message(r agentapi.HelloResponse) string {
	if r.Message == "" {
		return ""
	}
	return fmt.Sprintf(" message=%q", r.Message)
}

// BMCUserCreator is a System that can give its BMC a user in-band.
type BMCUserCreator interface {
	CreateBMCUser(ctx context.Context, name, password string) error
}

// bmcCredentials creates the user the region asked for on the machine's
// IPMI BMC. A failure is reported and enlistment goes on without: the
// operator can still give credentials by hand.
func (a *Agent) bmcCredentials(ctx context.Context, id agentapi.Identity, user string) *agentapi.BMCCredentials {
	uc, ok := a.Sys.(BMCUserCreator)
	if user == "" || !ok || id.BMC == nil || id.BMC.Type != "ipmi" || id.BMC.Address == "" {
		return nil
	}
	pw := NewBMCPassword()
	var err error
	_ = a.timed("bmc_user", func() error {
		err = uc.CreateBMCUser(ctx, user, pw)
		return nil
	})
	if err != nil {
		a.Logf("bmc user %s not created: %v", user, err)
		return nil
	}
	a.Logf("bmc user %s created on %s", user, id.BMC.Address)
	return &agentapi.BMCCredentials{User: user, Password: pw}
}

func (a *Agent) enlist(ctx context.Context, id agentapi.Identity, bmcUser string) (agentapi.HelloResponse, error) {
	creds := a.bmcCredentials(ctx, id, bmcUser)
	var inv *machine.Inventory
	_ = a.timed("inventory", func() error {
		inv, _ = a.Sys.Inventory(ctx)
		return nil
	})
	a.Logf("inventory cpus=%d memory_mib=%d disks=%d nics=%d", inv.CPU.Threads, inv.MemoryMiB, len(inv.Disks), len(inv.NICs))
	var resp agentapi.EnlistResponse
	err := a.timed("enlist", func() error {
		return a.retry(ctx, "enlist", func(ctx context.Context) (err error) {
			resp, err = a.Client.Enlist(ctx, agentapi.EnlistRequest{Identity: id, Inventory: inv, BMCCredentials: creds})
			return err
		})
	})
	if err != nil {
		return resp, err
	}
	a.Logf("enlist action=%s system_id=%s hostname=%s phase=%s%s", resp.Action, resp.SystemID, resp.Hostname, resp.Phase, message(resp))
	if resp.Action == agentapi.ActionEnlist {
		return resp, errors.New("the region answered enlist to enlist")
	}
	return resp, nil
}

// act does what an answer says.
func (a *Agent) act(ctx context.Context, r agentapi.HelloResponse) error {
	switch r.Action {
	case agentapi.ActionPowerOff:
		a.powerOff()
		return nil
	case agentapi.ActionReboot:
		return a.reboot(ctx, r.WaitForBMC)
	case agentapi.ActionProceed:
		if r.Token == "" {
			return errors.New("proceed without a token")
		}
		a.Client.Token = r.Token
		phase, ok := a.Phases[r.Phase]
		if !ok {
			err := fmt.Errorf("the ephemeral environment cannot run phase %s yet", r.Phase)
			a.Logf("phase %s unsupported", r.Phase)
			a.signalFailed(ctx, err)
			a.powerOff()
			return nil
		}
		a.Logf("phase %s start", r.Phase)
		if err := phase(ctx, a, r); err != nil {
			// The phase's own words go to the region, without a prefix.
			a.Logf("FATAL: phase %s: %v", r.Phase, err)
			a.signalFailed(ctx, err)
			a.powerOff()
			return nil
		}
		a.Logf("phase %s done", r.Phase)
		if a.rebootAfter {
			return a.reboot(ctx, a.waitBMC)
		}
		a.powerOff()
		return nil
	}
	return fmt.Errorf("unknown action %q", r.Action)
}

// reboot restarts the machine, first giving the region's reset through
// the BMC (which also sets the next boot) the time to come when it will.
func (a *Agent) reboot(ctx context.Context, waitBMC bool) error {
	if waitBMC {
		a.Logf("reboot waiting up to %s for the BMC to reset the machine", a.BMCResetWait)
		select {
		case <-time.After(a.BMCResetWait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	a.printStages()
	a.Logf("rebooting")
	if err := a.Power.Reboot(); err != nil {
		return fmt.Errorf("reboot: %w", err)
	}
	return nil
}

func (a *Agent) powerOff() {
	a.printStages()
	a.Logf("powering off")
	if err := a.Power.PowerOff(); err != nil {
		a.Logf("power off: %v", err)
	}
}

// fail reports a fatal error: on the console, to the region when the agent
// has a token, then powers off.
func (a *Agent) fail(ctx context.Context, err error) {
	a.Logf("FATAL: %v", err)
	if a.Client != nil && a.Client.Token != "" {
		a.signalFailed(ctx, err)
	}
	a.powerOff()
}

func (a *Agent) signalFailed(ctx context.Context, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	serr := a.retry(ctx, "signal FAILED", func(ctx context.Context) error {
		return a.Client.Signal(ctx, agentapi.StatusFailed, err.Error(), nil)
	})
	if serr != nil {
		a.Logf("signal FAILED: %v", serr)
		return
	}
	a.Logf("signal status=FAILED")
}

// retryable says whether a call that failed with err is worth repeating:
// network errors, 5xx, 408 and 429.
func retryable(err error) bool {
	var se *agentapi.StatusError
	if errors.As(err, &se) {
		return se.Code >= 500 || se.Code == 429 || se.Code == 408
	}
	var je *json.SyntaxError
	return !errors.As(err, &je)
}

// retry calls fn until it succeeds, fails for good, or RetryFor passes,
// backing off between attempts (twice as long after a 429).
func (a *Agent) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	deadline := time.Now().Add(a.RetryFor)
	delay := a.Backoff
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		var se *agentapi.StatusError
		if errors.As(err, &se) && se.Code == 429 {
			delay *= 2
		}
		if time.Now().Add(delay).After(deadline) {
			return fmt.Errorf("%s: gave up after %d attempts: %w", what, attempt, err)
		}
		a.Logf("%s failed (attempt %d), retrying in %s: %v", what, attempt, delay, err)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		delay = min(delay*2, a.MaxBackoff)
	}
}

// Heartbeat signals WORKING now and then every interval until stop is
// called; stop waits for an in-flight signal to finish.
func (a *Agent) Heartbeat(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	every := a.Cmdline.Heartbeat
	if every <= 0 {
		every = DefaultHeartbeat
	}
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if err := a.Client.Signal(ctx, agentapi.StatusWorking, "", nil); err != nil && ctx.Err() == nil {
				a.Logf("heartbeat: %v", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Commission is the commissioning phase: inventory, then the scripts
// the region set (commissioning, then any testing ones), then the
// inventory sent as agentapi.InventoryFile with the raw files, while
// heartbeats go out. A script that fails fails the phase.
func Commission(ctx context.Context, a *Agent, _ agentapi.HelloResponse) error {
	stop := a.Heartbeat(ctx)
	var inv *machine.Inventory
	var files map[string][]byte
	_ = a.timed("inventory", func() error {
		inv, files = a.Sys.Inventory(ctx)
		return nil
	})
	a.Logf("inventory cpus=%d memory_mib=%d disks=%d nics=%d", inv.CPU.Threads, inv.MemoryMiB, len(inv.Disks), len(inv.NICs))
	js, err := json.MarshalIndent(inv, "", "  ")
	if err != nil {
		stop()
		return err
	}
	err = a.timed("scripts", func() error { return a.runTaskScripts(ctx, js) })
	stop()
	if err != nil {
		return err
	}
	out := map[string][]byte{agentapi.InventoryFile: js}
	for k, v := range files {
		out[k] = v
	}
	err = a.timed("signal", func() error {
		return a.retry(ctx, "signal OK", func(ctx context.Context) error {
			return a.Client.Signal(ctx, agentapi.StatusOK, "", out)
		})
	})
	if err != nil {
		return err
	}
	a.Logf("signal status=OK files=%d", len(out))
	return nil
}

// Test is the testing phase: the region's testing scripts; one that
// fails ends the phase FAILED (the machine is then Failed testing).
func Test(ctx context.Context, a *Agent, _ agentapi.HelloResponse) error {
	stop := a.Heartbeat(ctx)
	err := a.timed("scripts", func() error { return a.runTaskScripts(ctx, nil) })
	stop()
	if err != nil {
		return err
	}
	err = a.retry(ctx, "signal OK", func(ctx context.Context) error {
		return a.Client.Signal(ctx, agentapi.StatusOK, "", nil)
	})
	if err != nil {
		return err
	}
	a.Logf("signal status=OK")
	return nil
}

// runTaskScripts fetches the phase's scripts and runs them; inventory is
// what the shipped inventory script reports. A region that serves no
// task (older) runs none.
func (a *Agent) runTaskScripts(ctx context.Context, inventory []byte) error {
	var task agentapi.Task
	err := a.retry(ctx, "task", func(ctx context.Context) (err error) {
		task, err = a.Client.Task(ctx)
		return err
	})
	var se *agentapi.StatusError
	if errors.As(err, &se) && se.Code == 404 {
		return nil
	}
	if err != nil {
		return err
	}
	if len(task.Scripts) == 0 {
		return nil
	}
	if err := installApplets(); err != nil {
		a.Logf("busybox applets: %v", err)
	}
	sr := &ScriptRunner{Report: a.Client.Report, Logf: a.Logf, Every: a.ScriptReportEvery,
		Builtin: func(ctx context.Context, name string) ([]byte, error) {
			switch name {
			case scripts.Inventory:
				return inventory, nil
			case scripts.LSHW:
				return runLSHW(ctx)
			}
			return nil, nil
		}}
	bad, err := sr.Run(ctx, task.Scripts)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d script(s) did not pass: %s", len(bad), strings.Join(bad, ", "))
	}
	return nil
}

// installApplets gives the environment, which has busybox but no /bin/sh,
// the shell and the commands scripts expect (sh, awk, dd, grep, ...).
func installApplets() error {
	if _, err := os.Stat("/bin/sh"); err == nil {
		return nil
	}
	bb, err := findTool("busybox")
	if err != nil {
		return nil // no busybox: scripts fail in words (no shell)
	}
	if err := os.MkdirAll("/bin", 0o755); err != nil {
		return err
	}
	if out, err := exec.Command(bb, "--install", "-s", "/bin").CombinedOutput(); err != nil {
		return fmt.Errorf("%s --install: %v: %s", bb, err, out)
	}
	return nil
}

// runLSHW is the shipped lshw script done by the agent itself, so that
// it needs no shell; nil without lshw in the environment (skipped).
func runLSHW(ctx context.Context) ([]byte, error) {
	p, err := findTool("lshw")
	if err != nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "-xml", "-quiet").Output()
	if err != nil {
		return nil, fmt.Errorf("lshw -xml: %w", err)
	}
	return out, nil
}
