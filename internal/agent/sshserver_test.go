package agent

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

func newClientKey(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func authorizedLine(s ssh.Signer) string { return string(ssh.MarshalAuthorizedKey(s.PublicKey())) }

// startSSH runs an SSHServer for the given authorized keys on loopback.
func startSSH(t *testing.T, authorized ...ssh.Signer) (addr string, host ssh.PublicKey) {
	t.Helper()
	return startSSHWith(t, nil, authorized...)
}

// startSSHWith is startSSH with the server changed by opt first.
func startSSHWith(t *testing.T, opt func(*SSHServer), authorized ...ssh.Signer) (addr string, host ssh.PublicKey) {
	t.Helper()
	var lines []string
	for _, k := range authorized {
		lines = append(lines, authorizedLine(k))
	}
	keys, bad := ParseAuthorizedKeys(append(lines, "not a key"))
	if len(keys) != len(authorized) || len(bad) != 1 {
		t.Fatalf("parsed %d keys, %d bad", len(keys), len(bad))
	}
	hk, err := NewHostKey()
	if err != nil {
		t.Fatal(err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &SSHServer{Authorized: keys, HostKey: hk, Shell: sh, Dir: "/", Env: []string{"PATH=/usr/bin:/bin"}, Logf: t.Logf}
	if opt != nil {
		opt(srv)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return l.Addr().String(), hk.PublicKey()
}

func dial(addr string, host ssh.PublicKey, auth ...ssh.AuthMethod) (*ssh.Client, error) {
	return ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "root", Auth: auth, HostKeyCallback: ssh.FixedHostKey(host), Timeout: 10 * time.Second})
}

func TestSSHServerExecAndRefusals(t *testing.T) {
	owner, stranger := newClientKey(t), newClientKey(t)
	addr, host := startSSH(t, owner)

	c, err := dial(addr, host, ssh.PublicKeys(owner))
	if err != nil {
		t.Fatalf("owner's key: %v", err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	// Stdout and stderr are separate SSH streams: no order between them.
	var stdout, stderr strings.Builder
	s.Stdout, s.Stderr = &stdout, &stderr
	err = s.Run("echo hello; echo oops >&2; printf %s \"$PATH\"")
	if err != nil || stdout.String() != "hello\n/usr/bin:/bin" || stderr.String() != "oops\n" {
		t.Fatalf("exec: stdout %q, stderr %q, %v", stdout.String(), stderr.String(), err)
	}
	// The exit status comes back.
	s, _ = c.NewSession()
	var ee *ssh.ExitError
	if err := s.Run("exit 7"); !errorAs(err, &ee) || ee.ExitStatus() != 7 {
		t.Fatalf("exit 7: %v", err)
	}
	// Standard input reaches the command.
	s, _ = c.NewSession()
	s.Stdin = strings.NewReader("from stdin\n")
	if out, err := s.Output("cat"); err != nil || string(out) != "from stdin\n" {
		t.Fatalf("stdin: %q %v", out, err)
	}

	// Another key, a password and no key at all are refused.
	if c, err := dial(addr, host, ssh.PublicKeys(stranger)); err == nil {
		c.Close()
		t.Fatal("a key that is not the owner's was let in")
	}
	if c, err := dial(addr, host, ssh.Password("root"), ssh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) {
		return []string{"root"}, nil
	})); err == nil {
		c.Close()
		t.Fatal("a password was let in")
	} else if !strings.Contains(err.Error(), "attempted methods [none]") && !strings.Contains(err.Error(), "no supported methods remain") {
		t.Logf("password refused: %v", err)
	}
	// A client that checks the host key against another refuses it.
	if c, err := dial(addr, stranger.PublicKey(), ssh.PublicKeys(owner)); err == nil {
		c.Close()
		t.Fatal("the host key check passed with the wrong key")
	}
}

func errorAs(err error, target **ssh.ExitError) bool {
	ee, ok := err.(*ssh.ExitError)
	if ok {
		*target = ee
	}
	return ok
}

// A shell on a pseudo-terminal: the client asks for one, types commands,
// and sees a terminal (tty answers a /dev/pts device, stty the size).
func TestSSHServerShellWithPTY(t *testing.T) {
	owner := newClientKey(t)
	addr, host := startSSH(t, owner)
	c, err := dial(addr, host, ssh.PublicKeys(owner))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RequestPty("xterm", 40, 100, ssh.TerminalModes{ssh.ECHO: 0}); err != nil {
		t.Fatalf("pty-req: %v", err)
	}
	in, _ := s.StdinPipe()
	var out lockedBuffer
	s.Stdout = &out
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	in.Write([]byte("tty; stty size; echo TERM=$TERM; exit 3\n"))
	err = s.Wait()
	var ee *ssh.ExitError
	if !errorAs(err, &ee) || ee.ExitStatus() != 3 {
		t.Fatalf("shell exit: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{"/dev/pts/", "40 100", "TERM=xterm"} {
		if !strings.Contains(got, want) {
			t.Errorf("shell output lacks %q:\n%s", want, got)
		}
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The rescue phase: the task's keys, an SSH server whose host key's
// fingerprint goes to the region with the OK signal, and the owner can log
// in while the phase runs.
func TestRescuePhase(t *testing.T) {
	owner := newClientKey(t)
	var mu sync.Mutex
	var signals []signal
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, "/MAAS/metadata/")
		switch p {
		case agentapi.TaskPath:
			json.NewEncoder(w).Encode(agentapi.Task{Phase: agentapi.PhaseRescue, SSHKeys: []string{"garbage", authorizedLine(owner)},
				RescueFrom: []string{"127.0.0.9", "not an address"}})
		case agentapi.MetadataPath:
			mu.Lock()
			signals = append(signals, signal{Status: r.FormValue("status"), Error: r.FormValue("error")})
			mu.Unlock()
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var console lockedBuffer
	a := &Agent{Client: &agentapi.Client{Base: srv.URL + "/MAAS/metadata/", Token: "a:b:c"}, Console: &console, RescueAddr: addr}
	a.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Rescue(ctx, a, agentapi.HelloResponse{}) }()

	var said string
	for deadline := time.Now().Add(10 * time.Second); said == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		if len(signals) > 0 {
			said = signals[0].Status + " " + signals[0].Error
		}
		mu.Unlock()
	}
	if !strings.HasPrefix(said, "OK SSH on port ") {
		cancel()
		t.Fatalf("signal %q\n%s", said, console.String())
	}
	// Idle connections from elsewhere take every slot; the owner, from
	// the address the task names, still gets in.
	for i := range sshMaxConns {
		greeted(t, dialFrom(t, fmt.Sprintf("127.0.0.%d", 2+i/sshPerAddress), addr))
	}
	var shown string
	sc, chans, reqs, err := ssh.NewClientConn(dialFrom(t, "127.0.0.9", addr), addr, &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(owner)}, Timeout: 10 * time.Second,
		HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error { shown = ssh.FingerprintSHA256(k); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	c := ssh.NewClient(sc, chans, reqs)
	if !strings.Contains(said, shown) {
		t.Errorf("the region was told %q; the client was shown %s", said, shown)
	}
	s, _ := c.NewSession()
	if out, err := s.Output("echo rescued"); err != nil || string(out) != "rescued\n" {
		t.Errorf("exec: %q %v", out, err)
	}
	c.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(console.String(), "key 1: ") {
		t.Errorf("the key that does not parse is not reported:\n%s", console.String())
	}
}

// With no usable key the phase fails rather than start a server nobody
// can log in to.
func TestRescuePhaseNeedsKeys(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(agentapi.Task{Phase: agentapi.PhaseRescue})
	}))
	defer srv.Close()
	a := &Agent{Client: &agentapi.Client{Base: srv.URL + "/", Token: "a:b:c"}, RescueAddr: "127.0.0.1:0"}
	a.defaults()
	err := Rescue(context.Background(), a, agentapi.HelloResponse{})
	if err == nil || !strings.Contains(err.Error(), "SSH keys") {
		t.Fatalf("err = %v", err)
	}
}

// dialFrom opens a TCP connection to addr from the loopback address src.
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", src, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// greeted says whether the server sent c its version line (it holds a
// slot for it) rather than closing it (over a limit).
func greeted(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line := make([]byte, 8)
	n, _ := io.ReadFull(c, line)
	return n == len(line) && string(line) == "SSH-2.0-"
}

// closedWithin waits for the server to close c, which must not send it
// anything more.
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 256)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue // the rest of the version line
		}
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
}

func loginFrom(t *testing.T, src, addr string, host ssh.PublicKey, key ssh.Signer) error {
	t.Helper()
	c := dialFrom(t, src, addr)
	sc, chans, reqs, err := ssh.NewClientConn(c, addr, &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(key)},
		HostKeyCallback: ssh.FixedHostKey(host), Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	cl := ssh.NewClient(sc, chans, reqs)
	defer cl.Close()
	s, err := cl.NewSession()
	if err != nil {
		return err
	}
	out, err := s.Output("echo in")
	if err == nil && string(out) != "in\n" {
		err = fmt.Errorf("exec said %q", out)
	}
	return err
}

// TestSSHServerIdleFlood: idle connections that never log in, from one
// address and from several, cannot lock the owner out. One address holds
// at most its share; when everyone's slots are taken the owner's address
// still logs in; and idle connections are closed after the start timeout,
// which frees the slots for everyone.
func TestSSHServerIdleFlood(t *testing.T) {
	owner := newClientKey(t)
	const start = 2 * time.Second
	addr, host := startSSHWith(t, func(s *SSHServer) {
		s.Owner = []netip.Addr{netip.MustParseAddr("127.0.0.9")}
		s.StartTimeout, s.AuthTimeout = start, 3*start
	}, owner)

	// One address opens twice its share: the rest are closed at once.
	var idle []net.Conn
	held := 0
	for range 2 * sshPerAddress {
		c := dialFrom(t, "127.0.0.2", addr)
		if greeted(t, c) {
			held++
			idle = append(idle, c)
		}
	}
	if held != sshPerAddress {
		t.Fatalf("one address holds %d idle connections; want %d", held, sshPerAddress)
	}
	// Other addresses take every slot left.
	for i := 3; held < sshMaxConns; i++ {
		for range sshPerAddress {
			c := dialFrom(t, fmt.Sprintf("127.0.0.%d", i), addr)
			if !greeted(t, c) {
				t.Fatalf("connection %d (from 127.0.0.%d) refused under the limits", held+1, i)
			}
			held++
			idle = append(idle, c)
		}
	}
	if c := dialFrom(t, "127.0.0.20", addr); greeted(t, c) {
		t.Fatalf("a connection over %d at once was served", sshMaxConns)
	}
	// The owner still gets in, from the address it asked from.
	if err := loginFrom(t, "127.0.0.9", addr, host, owner); err != nil {
		t.Fatalf("the owner's login with every slot idle: %v", err)
	}
	// Idle connections are closed after the start timeout ...
	for i, c := range idle {
		if !closedWithin(c, 5*start) {
			t.Fatalf("idle connection %d still open %v after its start timeout of %v", i, 5*start, start)
		}
	}
	// ... and their slots serve others again.
	if err := loginFrom(t, "127.0.0.20", addr, host, owner); err != nil {
		t.Fatalf("a login once the idle connections are gone: %v", err)
	}
}

// TestSSHServerSlowHandshake: a client that starts the handshake but
// dribbles it out is closed at the login deadline.
func TestSSHServerSlowHandshake(t *testing.T) {
	const auth = 2 * time.Second
	addr, _ := startSSHWith(t, func(s *SSHServer) { s.StartTimeout, s.AuthTimeout = time.Second, auth })
	c := dialFrom(t, "127.0.0.2", addr)
	t0 := time.Now()
	closed := make(chan struct{})
	go func() {
		_ = closedWithin(c, 30*time.Second)
		close(closed)
	}()
	// a byte of a version line every half second
	for _, b := range []byte("SSH-2.0-slow-client-that-never-ends") {
		select {
		case <-closed:
			if d := time.Since(t0); d > 5*auth {
				t.Fatalf("closed after %v; the login deadline is %v", d, auth)
			}
			return
		case <-time.After(500 * time.Millisecond):
		}
		if _, err := c.Write([]byte{b}); err != nil {
			return // closed
		}
	}
	t.Fatalf("a handshake dribbled out over %v was not cut off (login deadline %v)", time.Since(t0), auth)
}
