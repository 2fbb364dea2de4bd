package lab

import (
	"os/exec"
	"runtime"
)

// StartTied starts cmd from an OS thread kept until cmd has exited, and
// returns a channel closed once cmd is reaped (after runs first, if set).
// Pdeathsig in cmd.SysProcAttr fires when the thread that forked ends,
// and Go ends threads (a goroutine that exits locked to one, as in
// netns.Do): forked from a thread that outlives it, cmd dies with this
// process and not before.
func StartTied(cmd *exec.Cmd, after func()) (<-chan struct{}, error) {
	done := make(chan struct{})
	started := make(chan error)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		if after != nil {
			after()
		}
		close(done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}
