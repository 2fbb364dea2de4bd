package agent

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// OpenTerminal allocates a pseudo-terminal from /dev/ptmx (devpts must be
// mounted on /dev/pts).
func OpenTerminal() (*Terminal, error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("pty number: %w", err)
	}
	name := fmt.Sprintf("/dev/pts/%d", n)
	s, err := os.OpenFile(name, os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	return &Terminal{Master: m, slave: s}, nil
}

// Resize sets the terminal's size in characters.
func (t *Terminal) Resize(rows, cols uint32) error {
	if rows == 0 || cols == 0 || rows > 10000 || cols > 10000 {
		return fmt.Errorf("terminal size %dx%d out of range", cols, rows)
	}
	return unix.IoctlSetWinsize(int(t.Master.Fd()), unix.TIOCSWINSZ,
		&unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
}

// Start runs cmd in a new session with the terminal as its controlling
// terminal and standard files.
func (t *Terminal) Start(cmd *exec.Cmd) error {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = t.slave, t.slave, t.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	return cmd.Start()
}

// MountDevPTS mounts the pseudo-terminal filesystem, which the
// environment's /init does not: only rescue mode's shells need it.
func MountDevPTS() error {
	if err := os.MkdirAll("/dev/pts", 0o755); err != nil {
		return err
	}
	err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "ptmxmode=0666,mode=0620")
	if err != nil && err != unix.EBUSY {
		return fmt.Errorf("mount /dev/pts: %w", err)
	}
	return nil
}
