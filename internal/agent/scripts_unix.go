//go:build unix

package agent

import (
	"os/exec"
	"syscall"
)

// killGroup makes a timeout or abort stop the script's children too.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
