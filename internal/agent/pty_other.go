//go:build !linux

package agent

import (
	"errors"
	"os/exec"
)

var errNoPTY = errors.New("pseudo-terminals need Linux")

// OpenTerminal needs Linux.
func OpenTerminal() (*Terminal, error) { return nil, errNoPTY }

// Resize needs Linux.
func (t *Terminal) Resize(rows, cols uint32) error { return errNoPTY }

// Start needs Linux.
func (t *Terminal) Start(cmd *exec.Cmd) error { return errNoPTY }

// MountDevPTS needs Linux.
func MountDevPTS() error { return errNoPTY }
