package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// DefaultRescueAddr is where the rescue SSH server listens.
const DefaultRescueAddr = ":22"

// Rescue is rescue mode: an SSH server for the owner's keys, with a host
// key made at this boot whose fingerprint goes to the region (the
// machine's timeline shows it, so the operator can check what the client
// is shown). The signal that it is up moves the machine to Rescue mode;
// the server then runs until the machine is powered off or cycled (the
// exit from rescue mode does that through the BMC). The disks are left
// alone: they are there under /dev for the operator.
func Rescue(ctx context.Context, a *Agent, _ agentapi.HelloResponse) error {
	task, err := a.fetchTask(ctx)
	if err != nil {
		return err
	}
	keys, bad := ParseAuthorizedKeys(task.SSHKeys)
	for _, err := range bad {
		a.Logf("rescue: ssh %v (skipped)", err)
	}
	if len(keys) == 0 {
		return errors.New("rescue mode needs the owner's SSH keys, and the owner has none that parse (add one with POST account/prefs/sshkeys/)")
	}
	if err := installApplets(); err != nil {
		a.Logf("busybox applets: %v", err)
	}
	if a.PrepareRescue != nil {
		if err := a.PrepareRescue(); err != nil {
			a.Logf("rescue: %v (no terminals for shells)", err)
		}
	}
	shell, err := findTool("sh")
	if err != nil {
		return fmt.Errorf("rescue mode needs a shell: %w", err)
	}
	host, err := NewHostKey()
	if err != nil {
		return err
	}
	addr := a.RescueAddr
	if addr == "" {
		addr = DefaultRescueAddr
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("rescue ssh: %w", err)
	}
	defer l.Close()
	fp := ssh.FingerprintSHA256(host.PublicKey())
	a.Logf("rescue ssh listening on %s host_key=%s %s keys=%d", l.Addr(), host.PublicKey().Type(), fp, len(keys))
	srv := &SSHServer{Authorized: keys, HostKey: host, Shell: shell, Dir: "/", Logf: a.Logf, Owner: ownerAddrs(task.RescueFrom),
		Env: []string{"PATH=/bin:/sbin:/usr/bin:/usr/sbin", "HOME=/", "USER=root", "SHELL=" + shell}}
	served := make(chan error, 1)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { served <- srv.Serve(sctx, l) }()
	what := fmt.Sprintf("SSH on port %s, host key %s %s; log in as root with one of %d key(s) of the owner",
		portOf(l.Addr()), host.PublicKey().Type(), fp, len(keys))
	err = a.retry(ctx, "signal OK", func(ctx context.Context) error {
		return a.Client.Signal(ctx, agentapi.StatusOK, what, nil)
	})
	if err != nil {
		return err
	}
	a.Logf("signal status=OK rescue up")
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
		return nil
	}
}

// ownerAddrs are the addresses in from that parse; the rest are ignored
// (they only lose the owner's spare connections).
func ownerAddrs(from []string) []netip.Addr {
	var out []netip.Addr
	for _, f := range from {
		if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, a.Unmap())
		}
	}
	return out
}

func portOf(addr net.Addr) string {
	s := addr.String()
	return s[strings.LastIndex(s, ":")+1:]
}

// PrepareRescueMachine readies the running machine for rescue shells.
func PrepareRescueMachine() error {
	if err := MountDevPTS(); err != nil {
		return err
	}
	_ = os.MkdirAll("/root", 0o700)
	return nil
}
