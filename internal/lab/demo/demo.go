// Package demo is `anvil lab demo`: from a source checkout to a deployed
// Debian machine in one command. It builds what is missing (boot loaders,
// the ephemeral environment, a Debian root filesystem tarball; the last
// two cached by a hash of what they are made from), makes a network
// namespace with a bridge, starts `anvil serve` there with DHCP, adds the
// subnet, range and image through the API, and boots one QEMU machine
// behind an IPMI BMC (ipmi_sim) that enlists, commissions and is
// deployed. Everything it starts it stops again, by process id, when its
// context ends.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// Config says where the demo keeps its state and which addresses it uses.
type Config struct {
	// Dir holds the demo's data directory, logs and the machine's disk
	// and serial console; emptied of the previous run's state at start.
	Dir string
	// Cache holds the builds reused across runs (environment, image).
	Cache string
	// SourceRoot is the Anvil module the environment's agent is built from.
	SourceRoot string
	// Anvil is the anvil binary to run `serve`, `apikey` and
	// `import-loaders` with.
	Anvil string
	// Netns is the network namespace to create (removed first if left
	// over from a run that was killed).
	Netns string
	// Web is the address on this host, outside the namespace, where the
	// API and web pages are forwarded (127.0.0.1:5240; port 0 picks one).
	Web string
	// Memory (MiB) and DiskGiB size the machine.
	Memory, DiskGiB int
	// Accel is QEMU's accelerator: "tcg" if empty, or "kvm" where KVM
	// works (nested KVM often does not run iPXE).
	Accel string
	// SSHKey, if set, is a public key file given to the deployed
	// machine's default user (debian) through cloud-init.
	SSHKey string
}

// The provisioning network inside the namespace (TEST-NET-2).
const (
	bridge     = "br0"
	tap        = "tap0"
	regionIP   = "198.51.100.1"
	bmcIP      = "198.51.100.2"
	prefixLen  = "/24"
	subnetCIDR = "198.51.100.0/24"
	rangeStart = "198.51.100.100"
	rangeEnd   = "198.51.100.200"
	imageName  = "custom/debian-12"
	hostname   = "demo-1"

	machineMAC = "52:54:00:c0:ff:01"
	machineID  = "7d1e0c11-0000-4000-8000-00000000de01"
	bmcMAC     = "02:00:00:00:de:02"
	bmcUser    = "admin"
	// The lab BMC's password: ipmi_sim keeps it in its configuration file
	// in Dir, and the demo's machine lives only inside its namespace.
	bmcPass = "demo-bmc-pass"
)

// stateMarker marks Dir as the demo's, so that clearing the previous
// run's state never removes a directory the demo did not make.
const stateMarker = ".anvil-lab-demo"

// Run runs the demo until ctx ends, printing progress and where to look
// to out, then cleans up. It returns an error when a step fails.
func Run(ctx context.Context, cfg Config, out io.Writer) (err error) {
	if err := cfg.check(); err != nil {
		return err
	}
	// Before anything is built or removed: another demo may be running.
	if err := checkNetns(cfg.Netns); err != nil {
		return err
	}
	d := &run{cfg: cfg, out: out}
	defer func() {
		d.cleanup()
		if err == nil {
			d.say("stopped; logs and the machine's disk are in %s", cfg.Dir)
		}
	}()
	if err := d.listenWeb(); err != nil {
		return err
	}
	if err := d.prepare(ctx); err != nil {
		return err
	}
	if err := d.start(ctx); err != nil {
		return err
	}
	d.printWhere()
	if err := d.provision(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	d.say("running; interrupt (Ctrl-C) to stop and clean up")
	<-ctx.Done()
	return nil
}

func (c *Config) check() error {
	if os.Geteuid() != 0 {
		return errors.New("lab demo needs root: it makes a network namespace, a bridge and a tap, and runs debootstrap")
	}
	var missing []string
	for bin, pkg := range map[string]string{
		"ip": "iproute2", "qemu-system-x86_64": "qemu-system-x86", "ipmi_sim": "openipmi",
	} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, fmt.Sprintf("%s (package %s)", bin, pkg))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("lab demo: not installed: %v", missing)
	}
	if c.Dir == "" || c.Cache == "" || c.Anvil == "" || c.Netns == "" {
		return errors.New("lab demo: Dir, Cache, Anvil and Netns are required")
	}
	if c.Memory == 0 {
		c.Memory = 1024
	}
	if c.DiskGiB == 0 {
		c.DiskGiB = 4
	}
	if c.Accel == "" {
		c.Accel = "tcg"
	}
	if _, _, err := net.SplitHostPort(c.Web); err != nil {
		return fmt.Errorf("lab demo: web address %q: %w", c.Web, err)
	}
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return err
	}
	c.Dir = abs
	return nil
}

// run is one demo's state: what it made, so cleanup can undo it.
type run struct {
	cfg Config
	out io.Writer

	data, loaders string
	image         string
	key           string
	web           string // the forwarded base URL, http://HOST:PORT/MAAS/
	webListener   net.Listener

	undo []func()
}

func (d *run) say(format string, args ...any) {
	fmt.Fprintf(d.out, "demo: "+format+"\n", args...)
}

// step says what it does, does it and says how long it took.
func (d *run) step(what string, fn func() error) error {
	d.say("%s ...", what)
	t0 := time.Now()
	if err := fn(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	d.say("%s: done in %s", what, time.Since(t0).Round(100*time.Millisecond))
	return nil
}

// cleanup undoes what the run made, the newest first.
func (d *run) cleanup() {
	for i := len(d.undo) - 1; i >= 0; i-- {
		d.undo[i]()
	}
	d.undo = nil
}

func (d *run) onCleanup(fn func()) { d.undo = append(d.undo, fn) }

func (d *run) path(elem ...string) string {
	return filepath.Join(append([]string{d.cfg.Dir}, elem...)...)
}

func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB" }

// printWhere tells the operator where to watch the machine.
func (d *run) printWhere() {
	lines := [][2]string{
		{"web page", d.web + " (user admin, password in " + d.path("admin-password") + ")"},
		{"API key", d.key},
		{"timeline", "anvil login demo " + d.web + " " + d.key + " && anvil events --follow"},
		{"serial console", "tail -f " + d.path("machine", "qemu", "serial.log")},
		{"server log", d.path("serve.log")},
		{"namespace", "ip netns exec " + d.cfg.Netns + " ... (the provisioning network " + subnetCIDR + ")"},
	}
	d.say("Anvil is up; where to look:")
	for _, l := range lines {
		fmt.Fprintf(d.out, "demo:   %-15s %s\n", l[0], l[1])
	}
}
