// Package fleet runs many simulated machines behind virtual BMCs at once:
// one IPMI BMC per machine, and Redfish services fronting several systems
// each, as chassis managers do. `anvil lab` and the benchmarks use it.
package fleet

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/ipmibmc"
	"github.com/anvilmetal/anvil/internal/lab/redfishbmc"
)

// Config says what to run.
type Config struct {
	IPMI              int    // machines, each behind its own IPMI BMC
	RedfishChassis    int    // Redfish services
	SystemsPerChassis int    // systems behind each Redfish service
	Host              string // address the BMCs listen on (default 127.0.0.1)
	User, Password    string
	// DeadShare and SlowShare are the fractions of BMCs that never answer
	// and that answer after SlowDelay; Seed makes the choice repeatable.
	DeadShare, SlowShare float64
	SlowDelay            time.Duration
	Seed                 uint64
	// Log records every command every BMC serves.
	Log *lab.Log
	// Sessions, if set, counts the sessions the IPMI BMCs hold.
	Sessions *lab.SessionMeter
	// QEMU machines are real QEMU processes behind IPMI BMCs: power on
	// starts one, off stops it, the boot device sets its boot order.
	QEMU int
	// QEMUTemplate configures them; ID, UUID, MACs and StateDir are filled
	// in per machine, and NetDevs[0], if set, is a printf pattern for the
	// machine's tap ("tap%d").
	QEMUTemplate lab.QEMUConfig
	// StateDir holds each QEMU machine's state in a subdirectory.
	StateDir string
}

// Machine is one machine of the fleet, with what Anvil needs to add it.
type Machine struct {
	Hostname  string            `json:"hostname"`
	MAC       string            `json:"mac_address"`
	PowerType string            `json:"power_type"`
	Params    map[string]string `json:"power_parameters"`
	Faults    string            `json:"faults,omitempty"` // "dead", "slow" or ""
	Sim       *lab.SimMachine   `json:"-"`                // nil for QEMU machines
	QEMU      *lab.QEMUMachine  `json:"-"`
}

// Fleet is a running set of BMCs.
type Fleet struct {
	Machines []Machine
	closers  []func() error
}

// Start starts every BMC; on error it stops those already started.
func Start(cfg Config) (*Fleet, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.User == "" {
		cfg.User, cfg.Password = "admin", "password"
	}
	raiseFileLimit()
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	faults := func() (lab.Faults, string) {
		switch x := rng.Float64(); {
		case x < cfg.DeadShare:
			return lab.Faults{Hang: true}, "dead"
		case x < cfg.DeadShare+cfg.SlowShare:
			return lab.Faults{Delay: cfg.SlowDelay}, "slow"
		}
		return lab.Faults{}, ""
	}
	f := &Fleet{}
	n := 0
	for i := 0; i < cfg.IPMI; i++ {
		sim := newSim(n)
		fl, kind := faults()
		b := ipmibmc.New(sim, ipmibmc.Options{User: cfg.User, Password: cfg.Password, Faults: fl, Log: cfg.Log, Sessions: cfg.Sessions})
		addr, err := b.Start(net.JoinHostPort(cfg.Host, "0"))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("IPMI BMC %d: %w", i, err)
		}
		f.closers = append(f.closers, b.Close)
		f.Machines = append(f.Machines, Machine{
			Hostname: sim.ID(), MAC: sim.MACs()[0], PowerType: "ipmi", Faults: kind, Sim: sim,
			Params: map[string]string{"power_address": addr.String(), "power_user": cfg.User, "power_pass": cfg.Password},
		})
		n++
	}
	for i := 0; i < cfg.QEMU; i++ {
		qc := cfg.QEMUTemplate
		sim := newSim(n) // for its names only
		qc.ID, qc.UUID, qc.MACs = sim.ID(), sim.UUID(), sim.MACs()
		if len(qc.NetDevs) > 0 && strings.Contains(qc.NetDevs[0], "%") {
			qc.NetDevs = []string{fmt.Sprintf(qc.NetDevs[0], i)}
		}
		if cfg.StateDir != "" {
			qc.StateDir = filepath.Join(cfg.StateDir, qc.ID)
			if err := os.MkdirAll(qc.StateDir, 0o755); err != nil {
				f.Close()
				return nil, err
			}
		}
		qm, err := lab.NewQEMU(qc)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("QEMU machine %d: %w", i, err)
		}
		f.closers = append(f.closers, qm.Close)
		b := ipmibmc.New(qm, ipmibmc.Options{User: cfg.User, Password: cfg.Password, Log: cfg.Log, Sessions: cfg.Sessions})
		addr, err := b.Start(net.JoinHostPort(cfg.Host, "0"))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("IPMI BMC of QEMU machine %d: %w", i, err)
		}
		f.closers = append(f.closers, b.Close)
		f.Machines = append(f.Machines, Machine{
			Hostname: qc.ID, MAC: qc.MACs[0], PowerType: "ipmi", QEMU: qm,
			Params: map[string]string{"power_address": addr.String(), "power_user": cfg.User, "power_pass": cfg.Password},
		})
		n++
	}
	for c := 0; c < cfg.RedfishChassis; c++ {
		var systems []lab.Machine
		var sims []*lab.SimMachine
		for s := 0; s < max(cfg.SystemsPerChassis, 1); s++ {
			sim := newSim(n)
			systems, sims = append(systems, sim), append(sims, sim)
			n++
		}
		fl, kind := faults()
		svc := redfishbmc.New(redfishbmc.Options{User: cfg.User, Password: cfg.Password, Systems: systems, Faults: fl, Log: cfg.Log})
		u, err := svc.Start(net.JoinHostPort(cfg.Host, "0"), false)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("Redfish service %d: %w", c, err)
		}
		f.closers = append(f.closers, func() error { svc.Close(); return nil })
		for _, sim := range sims {
			f.Machines = append(f.Machines, Machine{
				Hostname: sim.ID(), MAC: sim.MACs()[0], PowerType: "redfish", Faults: kind, Sim: sim,
				Params: map[string]string{"power_address": u, "power_user": cfg.User, "power_pass": cfg.Password, "node_id": sim.ID()},
			})
		}
	}
	return f, nil
}

// Close stops every BMC.
func (f *Fleet) Close() error {
	var errs []error
	// BMCs first (last started), then the machines behind them.
	for i := len(f.closers) - 1; i >= 0; i-- {
		errs = append(errs, f.closers[i]())
	}
	f.closers = nil
	return errors.Join(errs...)
}

// newSim makes the n-th machine: its hostname, MAC and UUID follow from n,
// so that runs are repeatable and a machine is recognisable in logs.
func newSim(n int) *lab.SimMachine {
	mac := fmt.Sprintf("02:a0:%02x:%02x:%02x:%02x", byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	uuid := fmt.Sprintf("a0a0a0a0-0000-4000-8000-%012x", n)
	return lab.NewSim("lab-"+strconv.Itoa(n), uuid, mac)
}

// raiseFileLimit lifts the open-file limit to its hard maximum: each BMC
// holds a socket, and thousands exceed the usual soft limit of 1024.
func raiseFileLimit() {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}
