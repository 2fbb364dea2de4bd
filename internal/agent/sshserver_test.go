package agent

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
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
			json.NewEncoder(w).Encode(agentapi.Task{Phase: agentapi.PhaseRescue, SSHKeys: []string{"garbage", authorizedLine(owner)}})
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
	var shown string
	c, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(owner)}, Timeout: 10 * time.Second,
		HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error { shown = ssh.FingerprintSHA256(k); return nil }})
	if err != nil {
		t.Fatal(err)
	}
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
