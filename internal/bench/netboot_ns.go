package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The netboot bench's addresses. The server end carries 192.0.2.1 (what
// TFTP and HTTP clients fetch from) and 198.18.0.1/15; the client end is
// 198.18.0.2/15, which perfdhcp uses as its relay address (giaddr), so
// every DHCP server hands out leases from the /15 and answers unicast.
const (
	nbServerIP = "192.0.2.1"
	nbClientIP = "198.18.0.2"
)

// nbTopo is two network namespaces of the bench's own joined by a veth
// pair whose both ends live inside them: nothing touches the host's
// interfaces or routes.
type nbTopo struct {
	srvNS, cliNS string
	srvIf, cliIf string
}

func newNBTopo() (*nbTopo, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the netboot bench needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, errors.New("the netboot bench needs ip (iproute2)")
	}
	pid := os.Getpid()
	t := &nbTopo{
		srvNS: fmt.Sprintf("anvnbs%d", pid), cliNS: fmt.Sprintf("anvnbc%d", pid),
		srvIf: fmt.Sprintf("nbs%d", pid), cliIf: fmt.Sprintf("nbc%d", pid),
	}
	steps := [][]string{
		{"netns", "add", t.srvNS},
		{"netns", "add", t.cliNS},
		{"-n", t.srvNS, "link", "add", t.srvIf, "type", "veth", "peer", "name", t.cliIf, "netns", t.cliNS},
		{"-n", t.srvNS, "addr", "add", nbServerIP + "/24", "dev", t.srvIf},
		{"-n", t.srvNS, "addr", "add", "198.18.0.1/15", "dev", t.srvIf},
		{"-n", t.cliNS, "addr", "add", nbClientIP + "/15", "dev", t.cliIf},
		{"-n", t.srvNS, "link", "set", "lo", "up"},
		{"-n", t.cliNS, "link", "set", "lo", "up"},
		{"-n", t.srvNS, "link", "set", t.srvIf, "up"},
		{"-n", t.cliNS, "link", "set", t.cliIf, "up"},
		// The client reaches 192.0.2.1 across the link from its one address.
		{"-n", t.cliNS, "route", "add", nbServerIP + "/32", "dev", t.cliIf, "src", nbClientIP},
	}
	for _, s := range steps {
		if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
			t.close()
			return nil, fmt.Errorf("ip %s: %v %s", strings.Join(s, " "), err, out)
		}
	}
	return t, nil
}

// close deletes both namespaces, which destroys the veth pair with them.
// Processes started in them must be stopped first.
func (t *nbTopo) close() {
	for _, ns := range []string{t.srvNS, t.cliNS} {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
}

// nsCmd runs a program in namespace ns. `ip netns exec` execs it in
// place, so the command's pid is the program's.
func nsCmd(ctx context.Context, ns string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns}, args...)...)
}

// child is a server program the bench started; stop ends it by its pid
// (and its process group, for nginx's worker).
type child struct {
	name string
	cmd  *exec.Cmd
	out  *lockedWriter
	buf  *bytes.Buffer
	done chan struct{}
}

func startChild(name, ns string, env []string, args ...string) (*child, error) {
	c := &child{name: name, buf: &bytes.Buffer{}, done: make(chan struct{})}
	c.out = &lockedWriter{w: c.buf}
	c.cmd = nsCmd(context.Background(), ns, args...)
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	// Its own group so stop reaches workers it forks; SIGKILL if the
	// bench dies first, so no server outlives it.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := spawn(c.cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	return c, nil
}

var (
	spawnOnce sync.Once
	spawnReq  chan spawnJob
)

type spawnJob struct {
	cmd *exec.Cmd
	err chan error
}

// spawn starts cmd from one thread that lives as long as the process.
// Pdeathsig fires when the forking *thread* exits, and threads do exit
// here: each netns.Call goroutine takes whatever thread it lands on, maybe
// one that started a server, and kills that thread when it ends.
func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnReq = make(chan spawnJob)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must not exit
			for j := range spawnReq {
				j.err <- j.cmd.Start()
			}
		}()
	})
	j := spawnJob{cmd: cmd, err: make(chan error, 1)}
	spawnReq <- j
	return <-j.err
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// exited reports whether the program has already ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// output is how the program ended, if it has, and what it printed, for
// error messages.
func (c *child) output() string {
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	s := strings.TrimSpace(c.buf.String())
	if c.exited() {
		s = c.cmd.ProcessState.String() + ": " + s
	}
	return s
}

func (c *child) stop() {
	pgid := c.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-c.done
	}
}
