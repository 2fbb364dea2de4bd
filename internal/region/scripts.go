package region

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/store"
)

// EnsureScripts stores the scripts shipped with Anvil, or brings them up
// to date (keeping the tags and timeouts operators set on them).
func (s *Service) EnsureScripts(ctx context.Context) error {
	for _, b := range scripts.Builtins() {
		if err := s.Store.EnsureScript(ctx, b.Script, b.Text); err != nil {
			return fmt.Errorf("shipped script %s: %w", b.Name, err)
		}
	}
	return nil
}

// DefaultTestingTag selects the testing scripts op=test runs when none
// are named, as in MAAS.
const DefaultTestingTag = "commissioning"

// ScriptPlan is the scripts a commission or test is to run.
type ScriptPlan struct {
	Commissioning []store.Script // nil: no commissioning set
	Testing       []store.Script // nil: no testing set
	commissioning bool
}

// PlanScripts picks the scripts for op=commission (commissioning: every
// commissioning script, or the shipped ones and those named; testing:
// only those named) or op=test (testing: those named, or those tagged
// "commissioning"). Unknown names are a field error; a script needing
// packages is refused while Anvil has no package mirror.
func (s *Service) PlanScripts(ctx context.Context, a machine.Action, commissioning, testing []string) (*ScriptPlan, error) {
	all, err := s.Store.ListScripts(ctx)
	if err != nil {
		return nil, err
	}
	metas := make([]scripts.Script, len(all))
	byName := map[string]store.Script{}
	for i, sc := range all {
		metas[i] = sc.Meta
		byName[sc.Meta.Name] = sc
	}
	pick := func(field string, typ scripts.Type, want []string) ([]store.Script, error) {
		sel, err := scripts.Select(metas, typ, want)
		if err != nil {
			return nil, &ValidationError{Field: field, Err: err}
		}
		out := []store.Script{}
		for _, m := range sel {
			if len(m.Packages) > 0 {
				return nil, &ValidationError{Field: field, Err: fmt.Errorf("script %s needs packages (%s), and Anvil has no package mirror to install them from", m.Name, packageList(m.Packages))}
			}
			out = append(out, byName[m.Name])
		}
		return out, nil
	}
	p := &ScriptPlan{}
	switch a {
	case machine.Commission:
		p.commissioning = true
		want := commissioning
		if len(want) == 0 {
			for _, m := range metas {
				if m.Type == scripts.Commissioning {
					want = append(want, m.Name)
				}
			}
		} else {
			for _, sc := range all {
				if sc.Default && sc.Meta.Type == scripts.Commissioning {
					want = append(want, sc.Meta.Name)
				}
			}
		}
		if p.Commissioning, err = pick("commissioning_scripts", scripts.Commissioning, want); err != nil {
			return nil, err
		}
		if len(testing) > 0 {
			if p.Testing, err = pick("testing_scripts", scripts.Testing, testing); err != nil {
				return nil, err
			}
		}
	case machine.Test:
		if len(testing) == 0 {
			testing = []string{DefaultTestingTag}
			if _, err := scripts.Select(metas, scripts.Testing, testing); err != nil {
				testing = nil // nothing carries the tag: an empty set
			}
		}
		if p.Testing, err = pick("testing_scripts", scripts.Testing, testing); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	return p, nil
}

// defaultScripts gives a commissioning the region started itself (at
// enlistment, or for a machine added with commission) MAAS's default
// scripts. Commissioning goes on without them when that fails: the
// inventory is the agent's own.
func (s *Service) defaultScripts(ctx context.Context, m machine.Machine) {
	p, err := s.PlanScripts(ctx, machine.Commission, nil, nil)
	if err == nil {
		err = s.StartScripts(ctx, m, p)
	}
	s.logErr(err, "start commissioning scripts", m.SystemID)
}

func packageList(p map[string]any) string {
	var out []string
	for _, k := range []string{"apt", "snap", "url"} {
		if l, ok := p[k].([]any); ok && len(l) > 0 {
			out = append(out, fmt.Sprintf("%s: %v", k, l))
		}
	}
	return strings.Join(out, "; ")
}

// StartScripts stores the plan's sets for a machine that has just begun
// commissioning or testing, one result per script and instance, and
// brings the machine's summary up to date.
func (s *Service) StartScripts(ctx context.Context, m machine.Machine, p *ScriptPlan) error {
	if p == nil {
		return nil
	}
	disks, nics := devices(m.Inventory)
	add := func(typ scripts.Type, list []store.Script) error {
		set := store.ScriptSet{SystemID: m.SystemID, ResultType: typ}
		for _, sc := range list {
			var ver int64
			if len(sc.Versions) > 0 {
				ver = sc.Versions[0].ID
			}
			for _, in := range scripts.Instances(sc.Meta, disks, nics) {
				set.Results = append(set.Results, store.ScriptResult{ScriptID: sc.ID, ScriptVersionID: ver, Name: sc.Meta.Name,
					HardwareType: sc.Meta.HardwareType, Instance: in.Name, Parameters: in.Parameters, Status: scripts.Pending})
			}
		}
		_, err := s.Store.CreateScriptSet(ctx, set)
		return err
	}
	if p.commissioning || p.Commissioning != nil {
		if err := add(scripts.Commissioning, p.Commissioning); err != nil {
			return err
		}
	}
	if p.Testing != nil {
		if err := add(scripts.Testing, p.Testing); err != nil {
			return err
		}
	}
	return s.summarise(ctx, m.SystemID)
}

func devices(inv *machine.Inventory) (disks, nics []scripts.Device) {
	if inv == nil {
		return nil, nil
	}
	for _, d := range inv.Disks {
		disks = append(disks, scripts.Device{Name: d.Name, Path: "/dev/" + d.Name, Model: d.Model, Serial: d.Serial})
	}
	for _, n := range inv.NICs {
		nics = append(nics, scripts.Device{Name: n.Name, MAC: n.MAC})
	}
	return disks, nics
}

// current returns the sets the machine's phase runs: for commissioning
// the newest commissioning set and a testing set made with it; for
// testing the newest testing set.
func current(sets []store.ScriptSet, st machine.Status) []store.ScriptSet {
	var out []store.ScriptSet
	for _, set := range sets { // newest first
		switch {
		case st == machine.Testing && set.ResultType == scripts.Testing:
			return []store.ScriptSet{set}
		case st == machine.Commissioning && set.ResultType == scripts.Testing && len(out) == 0:
			out = append(out, set)
		case st == machine.Commissioning && set.ResultType == scripts.Commissioning:
			return append([]store.ScriptSet{set}, out...)
		case st == machine.Commissioning:
			return nil
		}
	}
	return nil
}

// taskScripts lists the pending runs of the machine's current sets.
func (s *Service) taskScripts(ctx context.Context, m machine.Machine) ([]agentapi.TaskScript, error) {
	sets, err := s.Store.ListScriptSets(ctx, m.SystemID)
	if err != nil {
		return nil, err
	}
	var out []agentapi.TaskScript
	for _, set := range current(sets, m.Status) {
		for _, r := range set.Results {
			if r.Status != scripts.Pending {
				continue
			}
			ts := agentapi.TaskScript{ResultID: r.ID, Name: r.Name, Instance: r.Instance, Testing: set.ResultType == scripts.Testing}
			sc, err := s.Store.GetScript(ctx, strconv.FormatInt(r.ScriptID, 10))
			if errors.Is(err, store.ErrNotFound) {
				continue // deleted since: nothing to run
			} else if err != nil {
				return nil, err
			}
			for _, v := range sc.Versions {
				if v.ID == r.ScriptVersionID {
					ts.Text = v.Data
				}
			}
			ts.Timeout = int(sc.Meta.Timeout / time.Second)
			ts.Parallel = int(sc.Meta.Parallel)
			ts.Builtin = sc.Default && (sc.Meta.Name == scripts.LSHW || sc.Meta.Name == scripts.Inventory)
			for _, in := range scripts.Instances(sc.Meta, oneDevice(r), oneDevice(r)) {
				ts.Args = in.Args
			}
			out = append(out, ts)
		}
	}
	return out, nil
}

// oneDevice is the device a result was made for, as its stored
// parameters name it.
func oneDevice(r store.ScriptResult) []scripts.Device {
	for _, p := range r.Parameters {
		q, _ := p.(map[string]any)
		v, ok := q["value"].(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { x, _ := v[k].(string); return x }
		return []scripts.Device{{Name: str("name"), Path: str("path"), Model: str("model"), Serial: str("serial"),
			MAC: str("mac_address"), Vendor: str("vendor"), Product: str("product")}}
	}
	return nil
}

// maxScriptOutput caps what one result keeps of each output.
const maxScriptOutput = 4 << 20

// ReportScript takes the environment's report on one script run of m.
// Only results of m's current sets are taken, and only while they have
// not ended; output is appended and capped.
func (s *Service) ReportScript(ctx context.Context, m machine.Machine, rep agentapi.ScriptReport) error {
	status, ok := map[string]scripts.Status{agentapi.ScriptRunning: scripts.Running, agentapi.ScriptPassed: scripts.Passed,
		agentapi.ScriptFailed: scripts.Failed, agentapi.ScriptTimedOut: scripts.TimedOut, agentapi.ScriptSkipped: scripts.Skipped,
		agentapi.ScriptDegraded: scripts.Degraded}[rep.Status]
	if !ok {
		return &ValidationError{Field: "status", Err: fmt.Errorf("unknown script status %q", rep.Status)}
	}
	if err := checkReportNumbers(rep); err != nil {
		return err
	}
	sets, err := s.Store.ListScriptSets(ctx, m.SystemID)
	if err != nil {
		return err
	}
	mine := false
	for _, set := range current(sets, m.Status) {
		for _, r := range set.Results {
			mine = mine || r.ID == rep.ResultID
		}
	}
	if !mine {
		return fmt.Errorf("script result %d of machine %s: %w", rep.ResultID, m.SystemID, store.ErrNotFound)
	}
	now := s.Now()
	_, err = s.Store.UpdateScriptResult(ctx, m.SystemID, rep.ResultID, func(r *store.ScriptResult) error {
		if r.Status.Done() {
			return &ValidationError{Field: "result_id", Err: fmt.Errorf("script %s already ended (%s)", r.Name, r.Status)}
		}
		if r.Started.IsZero() {
			r.Started = now
		}
		r.Output = capped(r.Output, rep.Output)
		r.Stdout = capped(r.Stdout, rep.Stdout)
		r.Stderr = capped(r.Stderr, rep.Stderr)
		r.Status = status
		if status != scripts.Running {
			r.ExitStatus, r.Result = rep.ExitStatus, capped(nil, rep.Result)
			r.Ended = now
			if rep.RuntimeMS > 0 {
				r.Started = now.Add(-time.Duration(rep.RuntimeMS) * time.Millisecond)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if status != scripts.Running {
		if err := s.summarise(ctx, m.SystemID); err != nil {
			return err
		}
		if status == scripts.Passed && isLSHW(sets, rep.ResultID) {
			return s.RetagMachine(ctx, m.SystemID)
		}
		return nil
	}
	// A heartbeat too: a script still writing keeps the phase alive.
	_, _, err = s.act(ctx, machine.SystemActor, m.SystemID, machine.Input{Action: machine.Heartbeat}, actOpts{})
	return err
}

// maxScriptRuntime bounds a reported run time: the longest tests (a
// whole-disk badblocks) take days, and a month in milliseconds is far
// from overflowing time arithmetic.
const maxScriptRuntime = 31 * 24 * time.Hour

// checkReportNumbers refuses an exit status no process has (-1 is Go's
// "killed by a signal") and a run time no script takes, before either
// reaches the store's 32-bit column or a timestamp.
func checkReportNumbers(rep agentapi.ScriptReport) error {
	if e := rep.ExitStatus; e != nil {
		if err := (machine.Range{Min: -1, Max: 255}).Check("exit_status", int64(*e)); err != nil {
			return &ValidationError{Field: "exit_status", Err: err}
		}
	}
	if err := (machine.Range{Min: 0, Max: maxScriptRuntime.Milliseconds()}).Check("runtime_ms", rep.RuntimeMS); err != nil {
		return &ValidationError{Field: "runtime_ms", Err: err}
	}
	return nil
}

func capped(have, more []byte) []byte {
	room := maxScriptOutput - len(have)
	if room <= 0 {
		return have
	}
	if len(more) > room {
		more = more[:room]
	}
	return append(have, more...)
}

// AbortScripts marks what had not ended of the machine's newest sets as
// aborted, after an abort.
func (s *Service) AbortScripts(ctx context.Context, systemID string) error {
	sets, err := s.Store.ListScriptSets(ctx, systemID)
	if err != nil {
		return err
	}
	seen := map[scripts.Type]bool{}
	for _, set := range sets {
		if seen[set.ResultType] {
			continue
		}
		seen[set.ResultType] = true
		for _, r := range set.Results {
			if r.Status.Done() {
				continue
			}
			if _, err := s.Store.UpdateScriptResult(ctx, systemID, r.ID, func(r *store.ScriptResult) error {
				if !r.Status.Done() {
					r.Status, r.Ended = scripts.Aborted, s.Now()
				}
				return nil
			}); err != nil {
				return err
			}
		}
	}
	return s.summarise(ctx, systemID)
}

// summarise recomputes the machine's script summary from its newest sets.
func (s *Service) summarise(ctx context.Context, systemID string) error {
	sets, err := s.Store.ListScriptSets(ctx, systemID)
	if err != nil {
		return err
	}
	sum := Summarise(sets)
	_, err = s.Store.UpdateMachine(ctx, systemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.Scripts = sum
		return nil, nil
	})
	return err
}

// Summarise is MAAS's status fields over a machine's sets (newest first):
// the newest commissioning set, and the newest testing set per hardware
// type.
func Summarise(sets []store.ScriptSet) machine.ScriptSummary {
	sum := machine.ScriptSummary{Known: len(sets) > 0}
	var com, test *store.ScriptSet
	for i := range sets {
		switch sets[i].ResultType {
		case scripts.Commissioning:
			if com == nil {
				com = &sets[i]
			}
		case scripts.Testing:
			if test == nil {
				test = &sets[i]
			}
		}
	}
	of := func(set *store.ScriptSet, keep func(scripts.HardwareType) bool) machine.ScriptStatus {
		var sts []scripts.Status
		if set != nil {
			for _, r := range set.Results {
				if keep(r.HardwareType) && !r.Suppressed {
					sts = append(sts, r.Status)
				}
			}
		}
		return machine.ScriptStatus(scripts.Summary(sts))
	}
	every := func(scripts.HardwareType) bool { return true }
	is := func(h ...scripts.HardwareType) func(scripts.HardwareType) bool {
		return func(x scripts.HardwareType) bool {
			for _, y := range h {
				if x == y {
					return true
				}
			}
			return false
		}
	}
	sum.Commissioning = of(com, every)
	sum.Testing = of(test, every)
	if com != nil {
		sum.CommissioningSet = com.ID
	}
	if test != nil {
		sum.TestingSet = test.ID
	}
	if test != nil && len(test.Results) == 0 {
		sum.Testing = machine.ScriptPassed // an empty set passed at once
	}
	sum.CPU, sum.Memory, sum.Storage = of(test, is(scripts.CPU)), of(test, is(scripts.Memory)), of(test, is(scripts.Storage))
	sum.Network, sum.Interface = of(test, is(scripts.Network)), of(test, is(scripts.Network))
	sum.Other = of(test, is(scripts.Node, scripts.GPU))
	if test != nil && len(test.Results) == 0 {
		sum.Other = machine.NoScripts
	}
	if com != nil && len(com.Results) == 0 {
		sum.Commissioning = machine.ScriptPassed
	}
	return sum
}

func isLSHW(sets []store.ScriptSet, id int64) bool {
	for _, set := range sets {
		for _, r := range set.Results {
			if r.ID == id {
				return r.Name == scripts.LSHW
			}
		}
	}
	return false
}
