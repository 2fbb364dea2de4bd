package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/scripts"
)

// ScriptTools are the programs the shipped scripts use, copied into the
// environment when the build machine has them.
var ScriptTools = []string{"busybox", "lshw", "smartctl", "memtester", "fio", "badblocks", "stress-ng", "nvme"}

// ScriptRunner runs commissioning and testing scripts as real processes
// and reports each to the region as it goes.
type ScriptRunner struct {
	Report func(ctx context.Context, r agentapi.ScriptReport) error
	Logf   func(format string, args ...any)
	// Dir is where scripts and their result files are written; default
	// os.TempDir()/anvil-scripts.
	Dir string
	// Every is how often output is streamed while a script runs; default
	// 2 seconds.
	Every time.Duration
	// Shell runs scripts whose interpreter the environment lacks (most
	// say #!/bin/bash; the environment has busybox's sh); default the
	// first of /bin/sh, /usr/bin/sh, busybox.
	Shell []string
	// Builtin runs a shipped script the agent does itself; nil output
	// and nil error is "skipped".
	Builtin func(ctx context.Context, name string) (out []byte, err error)
	// Agent is the agent binary scripts run as $ANVIL_AGENT to write
	// their result YAML; default os.Executable().
	Agent string
}

// ErrStopped is a run the region no longer takes (the phase was aborted
// or ended): the environment stops at once.
var ErrStopped = errors.New("the region no longer takes this phase's results")

// Run runs the scripts, side by side as their parallel settings allow
// (scripts.Batches), and returns the names of those that did not pass. It
// stops early when the region refuses a report.
func (sr *ScriptRunner) Run(ctx context.Context, list []agentapi.TaskScript) ([]string, error) {
	if sr.Every == 0 {
		sr.Every = 2 * time.Second
	}
	if sr.Dir == "" {
		sr.Dir = filepath.Join(os.TempDir(), "anvil-scripts")
	}
	if sr.Agent == "" {
		sr.Agent, _ = os.Executable()
	}
	if err := os.MkdirAll(sr.Dir, 0o700); err != nil {
		return nil, err
	}
	runs := make([]scripts.Run, len(list))
	for i, ts := range list {
		runs[i] = scripts.Run{Name: ts.Name, Parallel: scripts.Parallel(ts.Parallel), Testing: ts.Testing}
	}
	var bad []string
	for _, batch := range scripts.Batches(runs) {
		statuses, err := sr.batch(ctx, list, batch)
		for k, i := range batch {
			if st := statuses[k]; st == agentapi.ScriptFailed || st == agentapi.ScriptTimedOut {
				bad = append(bad, label(list[i]))
			}
		}
		if err != nil {
			return bad, err
		}
	}
	return bad, nil
}

// batch runs the scripts list[i] for i in batch side by side. When one
// run fails to report (the region refused it) the others are stopped and
// its error returned.
func (sr *ScriptRunner) batch(ctx context.Context, list []agentapi.TaskScript, batch []int) ([]string, error) {
	statuses := make([]string, len(batch))
	if len(batch) == 1 {
		st, err := sr.one(ctx, list[batch[0]])
		statuses[0] = st
		return statuses, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(batch))
	var wg sync.WaitGroup
	for k, i := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if statuses[k], errs[k] = sr.one(ctx, list[i]); errs[k] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs { // the first cause, not the runs it stopped
		if err != nil && !errors.Is(err, context.Canceled) {
			return statuses, err
		}
	}
	return statuses, errors.Join(errs...)
}

func label(ts agentapi.TaskScript) string {
	if ts.Instance != "" {
		return ts.Name + " on " + ts.Instance
	}
	return ts.Name
}

// send reports, telling a refused report (the phase is over) from a
// passing network fault, which only costs that chunk.
func (sr *ScriptRunner) send(ctx context.Context, r agentapi.ScriptReport) error {
	err := sr.Report(ctx, r)
	var se *agentapi.StatusError
	if errors.As(err, &se) && se.Code >= 400 && se.Code < 500 {
		return fmt.Errorf("%w: %v", ErrStopped, err)
	}
	if err != nil {
		sr.Logf("script report %d: %v", r.ResultID, err)
	}
	return nil
}

func (sr *ScriptRunner) one(ctx context.Context, ts agentapi.TaskScript) (string, error) {
	sr.Logf("script %s start timeout=%ds", label(ts), ts.Timeout)
	if ts.Builtin && sr.Builtin != nil {
		start := time.Now()
		out, err := sr.Builtin(ctx, ts.Name)
		rep := agentapi.ScriptReport{ResultID: ts.ResultID, Status: agentapi.ScriptPassed, Output: out, Stdout: out, RuntimeMS: ms(time.Since(start))}
		zero := 0
		rep.ExitStatus = &zero
		switch {
		case err != nil:
			one := 1
			rep.Status, rep.ExitStatus, rep.Stderr = agentapi.ScriptFailed, &one, []byte(err.Error()+"\n")
			rep.Output = append(rep.Output, rep.Stderr...)
		case out == nil:
			rep.Status, rep.Output = agentapi.ScriptSkipped, []byte(ts.Name+": not available in this environment\n")
		}
		sr.Logf("script %s %s", label(ts), rep.Status)
		return rep.Status, sr.send(ctx, rep)
	}
	// Each run has its own directory: instances of a script run at once.
	dir := filepath.Join(sr.Dir, fmt.Sprint(ts.ResultID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, filepath.Base(ts.Name))
	if err := os.WriteFile(path, ts.Text, 0o700); err != nil {
		return "", err
	}
	resultPath := path + ".result.yaml"
	os.Remove(resultPath)
	argv, err := sr.command(path, ts.Text)
	if err != nil {
		one := 1
		rep := agentapi.ScriptReport{ResultID: ts.ResultID, Status: agentapi.ScriptFailed, ExitStatus: &one,
			Output: []byte(err.Error() + "\n"), Stderr: []byte(err.Error() + "\n")}
		return rep.Status, sr.send(ctx, rep)
	}
	runCtx, cancel := context.WithCancel(ctx)
	if ts.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, time.Duration(ts.Timeout)*time.Second)
	}
	defer cancel()
	cmd := exec.CommandContext(runCtx, argv[0], append(argv[1:], ts.Args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RESULT_PATH="+resultPath, "DOWNLOAD_PATH="+dir, fmt.Sprintf("RUNTIME=%d", ts.Timeout),
		"HAS_STARTED=False", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", AgentEnv+"="+sr.Agent)
	cmd.WaitDelay = 2 * time.Second // children holding the pipes open
	killGroup(cmd)
	var out streams
	cmd.Stdout, cmd.Stderr = out.writer(false), out.writer(true)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		one := 1
		msg := []byte(fmt.Sprintf("cannot start %s: %v\n", ts.Name, err))
		return agentapi.ScriptFailed, sr.send(ctx, agentapi.ScriptReport{ResultID: ts.ResultID, Status: agentapi.ScriptFailed, ExitStatus: &one, Output: msg, Stderr: msg})
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(sr.Every)
	defer tick.Stop()
	if err := sr.send(ctx, agentapi.ScriptReport{ResultID: ts.ResultID, Status: agentapi.ScriptRunning}); err != nil {
		cancel()
		<-done
		return "", err
	}
	var werr error
wait:
	for {
		select {
		case werr = <-done:
			break wait
		case <-tick.C:
			o, so, se := out.take()
			if err := sr.send(ctx, agentapi.ScriptReport{ResultID: ts.ResultID, Status: agentapi.ScriptRunning, Output: o, Stdout: so, Stderr: se}); err != nil {
				cancel()
				<-done
				return "", err
			}
		}
	}
	runtime := time.Since(start)
	status, exit := agentapi.ScriptPassed, 0
	if cmd.ProcessState != nil {
		exit = cmd.ProcessState.ExitCode()
	}
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		status = agentapi.ScriptTimedOut
		out.note(fmt.Sprintf("%s timed out after %s and was stopped\n", ts.Name, time.Duration(ts.Timeout)*time.Second))
	case ctx.Err() != nil:
		return "", ctx.Err()
	case werr != nil || exit != 0:
		status = agentapi.ScriptFailed
	}
	result, _ := os.ReadFile(resultPath)
	if st, ok := resultStatus(result); ok && status != agentapi.ScriptTimedOut {
		status = st
	}
	o, so, se := out.take()
	rep := agentapi.ScriptReport{ResultID: ts.ResultID, Status: status, Output: o, Stdout: so, Stderr: se,
		ExitStatus: &exit, Result: result, RuntimeMS: ms(runtime)}
	sr.Logf("script %s %s exit=%d runtime=%dms", label(ts), status, exit, ms(runtime))
	return status, sr.send(ctx, rep)
}

func ms(d time.Duration) int64 { return max(d.Milliseconds(), 1) }

// command is how a script is started: its own interpreter when the
// environment has it, else the shell.
func (sr *ScriptRunner) command(path string, text []byte) ([]string, error) {
	line, _, _ := bytes.Cut(text, []byte("\n"))
	if interp, ok := strings.CutPrefix(string(line), "#!"); ok {
		if f := strings.Fields(interp); len(f) > 0 {
			if _, err := os.Stat(f[0]); err == nil {
				return append(f, path), nil
			}
		}
	}
	shell := sr.Shell
	if shell == nil {
		for _, c := range [][]string{{"/bin/sh"}, {"/usr/bin/sh"}, {"/bin/busybox", "sh"}, {"/usr/bin/busybox", "sh"}} {
			if _, err := os.Stat(c[0]); err == nil {
				shell = c
				break
			}
		}
	}
	if shell == nil {
		return nil, fmt.Errorf("no shell in this environment to run %s", filepath.Base(path))
	}
	return append(append([]string{}, shell...), path), nil
}

// resultStatus reads the status a script's result YAML sets, if any.
func resultStatus(b []byte) (string, bool) {
	var r struct {
		Status string `yaml:"status"`
	}
	if len(b) == 0 || yaml.Unmarshal(b, &r) != nil {
		return "", false
	}
	st, ok := scripts.ParseResultStatus(r.Status)
	if !ok {
		return "", false
	}
	return map[scripts.Status]string{scripts.Passed: agentapi.ScriptPassed, scripts.Failed: agentapi.ScriptFailed,
		scripts.Degraded: agentapi.ScriptDegraded, scripts.TimedOut: agentapi.ScriptTimedOut, scripts.Skipped: agentapi.ScriptSkipped}[st], true
}

// streams collects a script's output as it comes: combined, stdout and
// stderr, each since the last take.
type streams struct {
	mu                  sync.Mutex
	output, out, errout []byte
}

type streamWriter struct {
	s      *streams
	stderr bool
}

func (s *streams) writer(stderr bool) *streamWriter { return &streamWriter{s, stderr} }

func (w *streamWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.output = append(w.s.output, p...)
	if w.stderr {
		w.s.errout = append(w.s.errout, p...)
	} else {
		w.s.out = append(w.s.out, p...)
	}
	return len(p), nil
}

func (s *streams) note(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.output = append(s.output, msg...)
	s.errout = append(s.errout, msg...)
}

func (s *streams) take() (output, out, errout []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	output, out, errout = s.output, s.out, s.errout
	s.output, s.out, s.errout = nil, nil, nil
	return
}
