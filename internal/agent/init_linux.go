package agent

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// SetupPID1 mounts the kernel filesystems and points stdin, stdout and
// stderr at /dev/console. Mount errors are reported, not fatal.
func SetupPID1(log io.Writer) {
	for _, m := range []struct {
		target, fstype string
		flags          uintptr
		data           string
	}{
		{"/proc", "proc", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, ""},
		{"/sys", "sysfs", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, ""},
		{"/dev", "devtmpfs", unix.MS_NOSUID, "mode=0755"},
		{"/run", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV, "mode=0755"},
		{"/tmp", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV, "mode=1777"},
	} {
		_ = os.MkdirAll(m.target, 0o755)
		if err := unix.Mount(m.fstype, m.target, m.fstype, m.flags, m.data); err != nil && err != unix.EBUSY {
			fmt.Fprintf(log, "%smount %s: %v\n", Prefix, m.target, err)
		}
	}
	if fd, err := unix.Open("/dev/console", unix.O_RDWR|unix.O_NOCTTY, 0); err == nil {
		for _, std := range []int{0, 1, 2} {
			_ = unix.Dup3(fd, std, 0)
		}
		if fd > 2 {
			unix.Close(fd)
		}
	}
}

// LoadModules loads the modules list names, in order, from dir. A module
// already loaded (or built in) is not an error; other failures are
// reported and skipped.
func LoadModules(list, dir string, log func(string, ...any)) (loaded int) {
	b, err := os.ReadFile(list)
	if err != nil {
		log("modules: %v", err)
		return 0
	}
	for _, name := range strings.Fields(string(b)) {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			log("module %s: %v", name, err)
			continue
		}
		err = unix.FinitModule(int(f.Fd()), "", 0)
		f.Close()
		switch err {
		case nil:
			loaded++
		case unix.EEXIST, unix.ENODEV: // loaded already; no such hardware
		default:
			log("module %s: %v", name, err)
		}
	}
	return loaded
}

// WaitForDevices waits up to max for at least one physical NIC and the
// IPMI device to appear (drivers probe asynchronously); it returns as
// soon as both are there.
func WaitForDevices(max time.Duration) (nics int, ipmi bool) {
	deadline := time.Now().Add(max)
	for {
		nics = len(PhysicalNICs("/"))
		_, err := os.Stat(IPMIDevice)
		ipmi = err == nil
		if (nics > 0 && ipmi) || time.Now().After(deadline) {
			return nics, ipmi
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Uptime is the time since the kernel started, from /proc/uptime.
func Uptime() time.Duration {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	s, _ := strconv.ParseFloat(f[0], 64)
	return time.Duration(s * float64(time.Second))
}

// MachinePower powers off or reboots the machine the agent runs on, after
// syncing and unmounting what can be.
type MachinePower struct{}

func (MachinePower) PowerOff() error { return machineReboot(unix.LINUX_REBOOT_CMD_POWER_OFF) }
func (MachinePower) Reboot() error   { return machineReboot(unix.LINUX_REBOOT_CMD_RESTART) }

func machineReboot(cmd int) error {
	unix.Sync()
	for _, m := range []string{"/tmp", "/run"} {
		_ = unix.Unmount(m, unix.MNT_DETACH)
	}
	unix.Sync()
	return unix.Reboot(cmd)
}
