package e2e

import (
	"github.com/anvilmetal/anvil/internal/testutil/syncbuf"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// proc is a process started inside a network namespace (ip netns exec
// execs it, so the pid is the program's own) in a process group of its
// own. It is stopped with SIGTERM when the test ends, unless the test
// killed it first; when the test fails its output's end is shown.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	done chan struct{}
	err  error // how it ended, once done is closed
}

// procSpec says where a process runs and where its output goes.
type procSpec struct {
	ns    string          // the network namespace
	label string          // what the output is shown as
	out   *syncbuf.Buffer // its output, shared with others or not
	env   []string        // added to the test's environment
}

// startProc starts bin with args as spec says.
func startProc(t *testing.T, spec procSpec, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", spec.ns, bin}, args...)...)
	cmd.Stdout, cmd.Stderr = spec.out, spec.out
	if spec.env != nil {
		cmd.Env = append(os.Environ(), spec.env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s output (last 20000 bytes):\n%s", spec.label, tail(spec.out.Bytes(), 20000))
		}
	})
	return p
}

// kill sends SIGKILL to the process group, as a machine losing power
// would end it, and waits for the end.
func (p *proc) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// stop asks the process to end (SIGTERM), killing it after 15 s.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.kill()
	}
}
