package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// server is an `anvil serve` child process on an empty data directory.
type server struct {
	cmd    *exec.Cmd
	base   string
	caller *caller
	stderr *lockedWriter
	buf    *strings.Builder
	close  []func()
}

// startServer runs the binary with extra flags and returns once it answers
// and has an API key.
func startServer(ctx context.Context, bin, dbURL string, workers int, extra ...string) (*server, error) {
	s := &server{buf: &strings.Builder{}}
	s.stderr = &lockedWriter{w: s.buf}
	dir, err := os.MkdirTemp("", "anvil-bench-")
	if err != nil {
		return nil, err
	}
	s.close = append(s.close, func() { os.RemoveAll(dir) })
	if dbURL != "" {
		u, drop, err := pgtest.Create(ctx, dbURL)
		if err != nil {
			s.stop()
			return nil, err
		}
		s.close = append(s.close, func() { _ = drop() })
		dbURL = u
	}
	port, err := freePort()
	if err != nil {
		s.stop()
		return nil, err
	}
	args := append([]string{"serve", "--data", dir, "--listen", "127.0.0.1:" + port, "--log-level", "warn",
		"--power-workers", fmt.Sprint(workers)}, extra...)
	if dbURL != "" {
		args = append(args, "--db", dbURL)
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		s.stop()
		return nil, err
	}
	s.close = append([]func(){func() { _ = s.cmd.Process.Kill(); _ = s.cmd.Wait() }}, s.close...)
	if err := waitUp(ctx, "http://127.0.0.1:"+port+"/healthz"); err != nil {
		s.stop()
		return nil, fmt.Errorf("%w; server said: %s", err, s.buf.String())
	}
	keyArgs := []string{"apikey", "--username", "bench", "--data", dir}
	if dbURL != "" {
		keyArgs = append(keyArgs, "--db", dbURL)
	}
	out, err := exec.CommandContext(ctx, bin, keyArgs...).Output()
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("apikey: %w", err)
	}
	s.base = "http://127.0.0.1:" + port + "/MAAS/"
	s.caller = &caller{base: s.base + "api/2.0/", auth: authHeader(strings.TrimSpace(string(out))), http: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: 64},
	}}
	return s, nil
}

func (s *server) pid() int { return s.cmd.Process.Pid }

func (s *server) stop() {
	for _, f := range s.close {
		f()
	}
	s.close = nil
}
