package cli_test

import (
	"context"
	"testing"
	"time"
)

func TestZZProbe(t *testing.T) {
	e := startE2E(t, "")
	e.login()
	e.ok("machine", "add", "--hostname", "x", "--mac", "52:54:00:00:00:01")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { _, _, c := e.runContext(ctx, &out, &errb, "events", "-f"); done <- c }()
	out.waitFor(t, "Created")
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	cctx, ccancel := context.WithTimeout(context.Background(), 3*time.Second)
	err := e.srv.Close(cctx)
	ccancel()
	t.Logf("close: %v after %s", err, time.Since(start))
	errb.waitFor(t, "interrupted")
	t.Logf("stderr %q", errb.String())
	cancel()
	t.Logf("code %d", <-done)
}
