// Command lanread is the /init of a test initramfs: it loads the IPMI
// modules given on its command line (in order), reads the BMC's LAN
// configuration through /dev/ipmi0, prints it on the console as
// "lan ip=<ip> mac=<mac>" and powers the machine off.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"golang.org/x/sys/unix"
)

func main() {
	err := run()
	if err != nil {
		fmt.Printf("lanread: %v\n", err)
	}
	unix.Sync()
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	select {}
}

func run() error {
	_ = os.MkdirAll("/dev", 0o755)
	_ = os.MkdirAll("/proc", 0o755)
	_ = os.MkdirAll("/sys", 0o755)
	_ = unix.Mount("devtmpfs", "/dev", "devtmpfs", 0, "")
	_ = unix.Mount("proc", "/proc", "proc", 0, "")
	_ = unix.Mount("sysfs", "/sys", "sysfs", 0, "")
	mods, _ := filepath.Glob("/modules/*.ko") // named NN-name.ko: load order
	for _, m := range mods {
		if err := load(m); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat("/dev/ipmi0"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no /dev/ipmi0")
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.NewOpenClient()
	if err != nil {
		return err
	}
	if err := c.Connect(ctx); err != nil {
		return fmt.Errorf("open /dev/ipmi0: %w", err)
	}
	defer c.Close(ctx)
	ip, err := c.GetLanConfigParam(ctx, 1, 3, 0, 0)
	if err != nil {
		return fmt.Errorf("lan parameter 3: %w", err)
	}
	mac, err := c.GetLanConfigParam(ctx, 1, 5, 0, 0)
	if err != nil {
		return fmt.Errorf("lan parameter 5: %w", err)
	}
	if len(ip.ParamData) < 4 || len(mac.ParamData) < 6 {
		return fmt.Errorf("short answers % x, % x", ip.ParamData, mac.ParamData)
	}
	fmt.Printf("lan ip=%s mac=%s\n", net.IP(ip.ParamData[:4]), net.HardwareAddr(mac.ParamData[:6]))
	return nil
}

func load(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.FinitModule(int(f.Fd()), "", 0); err != nil && err != unix.EEXIST {
		return fmt.Errorf("load %s: %w", path, err)
	}
	return nil
}
