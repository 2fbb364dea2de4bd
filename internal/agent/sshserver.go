package agent

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/anvilmetal/anvil/internal/connlimit"
)

// SSHServer is the rescue environment's SSH server: public-key login for
// the keys it is given and nothing else, with exec and shell sessions (on
// a pseudo-terminal when the client asks for one).
type SSHServer struct {
	// Authorized are the keys that may log in.
	Authorized []ssh.PublicKey
	// HostKey is the server's identity, made at boot.
	HostKey ssh.Signer
	// Shell runs commands (Shell -c CMD) and interactive shells.
	Shell string
	// Env is the environment of what runs.
	Env []string
	// Dir is where sessions start.
	Dir  string
	Logf func(format string, args ...any)
	// Owner are the addresses the owner asked for rescue mode from: they
	// keep spare connections when everyone else's are taken.
	Owner []netip.Addr
	// StartTimeout and AuthTimeout bound a connection that has not
	// logged in: it must start the handshake within StartTimeout and
	// log in within AuthTimeout of connecting (zero: the defaults).
	StartTimeout, AuthTimeout time.Duration
}

// The environment is one machine's, for a few operators: connections at
// once are bounded in all and per source address, so that idle sockets
// from one address cannot take them all, and the owner's address keeps
// spare ones beyond the bound.
const (
	sshMaxConns   = 16
	sshPerAddress = 4
	sshOwnerSpare = 4
)

// A connection that has not logged in holds a slot only briefly: a
// client starts the handshake at once, and logs in within seconds.
const (
	sshStartTimeout = 5 * time.Second
	sshAuthTimeout  = 20 * time.Second
)

// NewHostKey makes an Ed25519 host key.
func NewHostKey() (ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	return ssh.NewSignerFromKey(priv)
}

// ParseAuthorizedKeys reads keys in authorized_keys form; those that do
// not parse are returned as errors, the rest are kept.
func ParseAuthorizedKeys(lines []string) ([]ssh.PublicKey, []error) {
	var keys []ssh.PublicKey
	var bad []error
	for i, l := range lines {
		k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(l))
		if err != nil {
			bad = append(bad, fmt.Errorf("key %d: %w", i+1, err))
			continue
		}
		keys = append(keys, k)
	}
	return keys, bad
}

func (s *SSHServer) config() *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			want := key.Marshal()
			for _, k := range s.Authorized {
				if bytes.Equal(k.Marshal(), want) {
					return &ssh.Permissions{Extensions: map[string]string{"key": ssh.FingerprintSHA256(key)}}, nil
				}
			}
			return nil, fmt.Errorf("key %s is not authorized", ssh.FingerprintSHA256(key))
		},
		// No password or keyboard-interactive callbacks: public keys only.
		MaxAuthTries: 6,
	}
	cfg.AddHostKey(s.HostKey)
	return cfg
}

// Serve accepts connections on l until ctx ends.
func (s *SSHServer) Serve(ctx context.Context, l net.Listener) error {
	cfg := s.config()
	l = s.limits().Listen(l)
	go func() { <-ctx.Done(); l.Close() }()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("ssh accept: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveConn(ctx, c, cfg)
		}()
	}
}

func (s *SSHServer) serveConn(ctx context.Context, c net.Conn, cfg *ssh.ServerConfig) {
	defer c.Close()
	pc := s.preAuth(c)
	sc, chans, reqs, err := ssh.NewServerConn(pc, cfg)
	if err != nil {
		s.Logf("ssh from %s refused: %v", c.RemoteAddr(), err)
		return
	}
	_ = c.SetDeadline(time.Time{})
	defer sc.Close()
	s.Logf("ssh login from %s as %s with key %s", c.RemoteAddr(), sc.User(), sc.Permissions.Extensions["key"])
	go ssh.DiscardRequests(reqs)
	go func() { <-ctx.Done(); sc.Close() }()
	var wg sync.WaitGroup
	defer wg.Wait()
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.session(ch, creqs)
		}()
	}
}

// limits are the connection limits, with the owner's spare slots.
func (s *SSHServer) limits() connlimit.Limits {
	return connlimit.Limits{Total: sshMaxConns, PerAddress: sshPerAddress, Spare: sshOwnerSpare,
		Reserved: func(a netip.Addr) bool { return slices.Contains(s.Owner, a) }}
}

// preAuth puts c under the start deadline until its first byte arrives,
// then under the login deadline, counted from the connection.
func (s *SSHServer) preAuth(c net.Conn) net.Conn {
	start, auth := s.StartTimeout, s.AuthTimeout
	if start <= 0 {
		start = sshStartTimeout
	}
	if auth <= 0 {
		auth = sshAuthTimeout
	}
	now := time.Now()
	_ = c.SetDeadline(now.Add(min(start, auth)))
	return &startedConn{Conn: c, deadline: now.Add(auth)}
}

// startedConn moves its deadline to the login deadline on the first
// byte read. Only the handshake reads it, from one goroutine.
type startedConn struct {
	net.Conn
	deadline time.Time
	started  bool
}

func (c *startedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.started {
		c.started = true
		_ = c.Conn.SetDeadline(c.deadline)
	}
	return n, err
}

// ptyRequest is RFC 4254's pty-req payload.
type ptyRequest struct {
	Term             string
	Cols, Rows, W, H uint32
	Modes            string
}

type windowChange struct{ Cols, Rows, W, H uint32 }

type exitStatus struct{ Status uint32 }

type execRequest struct{ Command string }

// session serves one session channel: at most one pty-req, then one
// shell or exec; window changes resize the terminal.
func (s *SSHServer) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	var pty *ptyRequest
	var term *Terminal
	done := make(chan uint32, 1)
	started := false
	for {
		var req *ssh.Request
		select {
		case req = <-reqs:
		case st := <-done:
			_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(exitStatus{st}))
			return
		}
		if req == nil {
			if term != nil {
				term.Close()
			}
			return
		}
		ok := false
		switch req.Type {
		case "pty-req":
			var p ptyRequest
			if !started && pty == nil && ssh.Unmarshal(req.Payload, &p) == nil && len(p.Term) < 64 {
				pty, ok = &p, true
			}
		case "window-change":
			var w windowChange
			if term != nil && ssh.Unmarshal(req.Payload, &w) == nil {
				ok = term.Resize(w.Rows, w.Cols) == nil
			}
		case "env":
			ok = true // accepted, not applied: the environment is fixed
		case "shell", "exec":
			if started {
				break
			}
			var cmd *exec.Cmd
			if req.Type == "exec" {
				var e execRequest
				if ssh.Unmarshal(req.Payload, &e) != nil {
					break
				}
				cmd = exec.Command(s.Shell, "-c", e.Command)
			} else {
				cmd = exec.Command(s.Shell, "-l")
			}
			cmd.Env, cmd.Dir = s.Env, s.Dir
			var err error
			if pty != nil {
				cmd.Env = append(append([]string(nil), cmd.Env...), "TERM="+pty.Term)
				term, err = s.startPTY(cmd, ch, pty)
			} else {
				err = startPiped(cmd, ch)
			}
			if err != nil {
				s.Logf("ssh %s: %v", req.Type, err)
				fmt.Fprintf(ch.Stderr(), "%v\n", err)
				break
			}
			started, ok = true, true
			go func() { done <- waitStatus(cmd, term) }()
		}
		if req.WantReply {
			_ = req.Reply(ok, nil)
		}
	}
}

// startPiped runs cmd with the channel as stdin, stdout and stderr. Stdin
// is copied by hand: a client that never closes it must not keep the
// session open after the command ends.
func startPiped(cmd *exec.Cmd, ch ssh.Channel) error {
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		_, _ = io.Copy(in, ch)
		in.Close()
	}()
	return nil
}

func (s *SSHServer) startPTY(cmd *exec.Cmd, ch ssh.Channel, p *ptyRequest) (*Terminal, error) {
	t, err := OpenTerminal()
	if err != nil {
		return nil, err
	}
	_ = t.Resize(p.Rows, p.Cols)
	if err := t.Start(cmd); err != nil {
		t.Close()
		return nil, err
	}
	go func() { _, _ = io.Copy(t.Master, ch) }()
	t.copied = make(chan struct{})
	go func() {
		_, _ = io.Copy(ch, t.Master)
		close(t.copied)
	}()
	return t, nil
}

// waitStatus waits for cmd (and the terminal's output to drain) and
// returns its exit status.
func waitStatus(cmd *exec.Cmd, t *Terminal) uint32 {
	err := cmd.Wait()
	if t != nil {
		t.closeSlave()
		select {
		case <-t.copied: // the master reads EOF once no process holds the slave
		case <-time.After(2 * time.Second): // a background child still holds it
		}
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return uint32(ee.ExitCode())
	}
	return 255
}

// Terminal is a pseudo-terminal pair.
type Terminal struct {
	Master *os.File
	slave  *os.File
	once   sync.Once
	copied chan struct{}
}

func (t *Terminal) closeSlave() {
	t.once.Do(func() { t.slave.Close() })
}

// Close closes both ends.
func (t *Terminal) Close() {
	t.closeSlave()
	t.Master.Close()
}
