// Package ipmisim is a lab BMC made of OpenIPMI's ipmi_sim (Debian
// package openipmi) in front of a QEMU machine, as a BMC is in front of
// real hardware: its LAN side answers IPMI 1.5 and RMCP+ (cipher suites
// 0-3) on an address of the caller's choosing, its system interface is
// given to the guest as a KCS device (/dev/ipmi0 under Linux), and its
// chassis control powers the QEMU process on and off.
//
// How ipmi_sim is wired (OpenIPMI 2.0.33, lanserv/bmc_chassis.c):
//
//   - In-band: `serial kcs 127.0.0.1 PORT codec VM` in lan.conf, and QEMU
//     runs with -chardev socket,...,reconnect=10 -device ipmi-bmc-extern
//     -device isa-ipmi-kcs. Messages the guest sends through KCS are
//     answered by the same MC that answers the LAN.
//
//   - LAN configuration: ipmi_sim does not keep the IP or MAC address
//     itself. Get LAN Configuration Parameters 3 (IP), 4 (source), 5
//     (MAC), 6 (netmask) and 12-15 (gateways) run the channel's
//     `lan_config_program` ("PROG get ip_addr", answered "ip_addr:A.B.C.D"),
//     whichever side asks: a LAN session or the guest on channel 1. Here
//     that program prints Config's Addr, MAC and Netmask, and refuses
//     to set them (the LAN socket cannot move).
//
//   - Chassis: ipmi_sim's `startcmd` (its own VM power control, QEMU as
//     its child) and its `chassis_control` program are exclusive: power,
//     status, reset and soft shutdown go to the program whenever one is
//     configured, and without one Set System Boot Options parameter 5 is
//     refused (CCh), so a boot device could never reach the machine.
//     This BMC therefore configures a chassis_control program and no
//     startcmd. The program is a shell script that hands each request
//     ("get power", "set power 1", "set boot pxe", "set reset 1", "set
//     shutdown 1") through a pair of FIFOs in Dir to this process, which
//     drives a lab.QEMUMachine: QEMU is this process's child, its power
//     state is whether the process lives (a guest powering itself off is
//     off at once), hard off is QMP quit, soft off is the ACPI power
//     button (QMP system_powerdown), reset is lab's PowerCycle (QMP
//     system_reset, or a restart when a boot once from the network is
//     pending), and power cycle is ipmi_sim's own: off, then on a second
//     later.
//
//   - Boot device: ipmi_sim passes only the device selector of the boot
//     flags ("pxe", "default", ...), not the persistent bit nor the EFI
//     bit. "pxe" is taken as a boot once from the network (what Anvil
//     asks before it power cycles): the next QEMU start runs with -boot
//     once=n,order=c and the device goes back to disk. Anything else is
//     the disk. Get System Boot Options reads the same state.
package ipmisim

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/power/ipmi"
)

// Config describes one BMC and the machine behind it.
type Config struct {
	// Dir holds everything: lan.conf, the emulator commands, ipmi_sim's
	// persistent state (state/), its output (ipmi_sim.log), the chassis
	// FIFOs and QEMU's state directory (qemu/: QMP socket, qemu.log,
	// serial.log). It must exist; t.TempDir() in tests.
	Dir string
	// Netns, if set, runs ipmi_sim inside that network namespace (ip
	// netns exec), and QEMU too (QEMU.Netns is set to it).
	Netns string
	// Addr is the IPv4 address the LAN side listens on, e.g. 192.0.2.21;
	// it is also what LAN parameter 3 reports.
	Addr string
	// Port is the UDP port; 623 if zero.
	Port int
	// MAC is the BMC's own MAC address, reported as LAN parameter 5.
	MAC string
	// Netmask is reported as LAN parameter 6; 255.255.255.0 if empty.
	Netmask string
	// User and Password are the one account (user 2), with administrator
	// privilege. The password has at most 20 characters.
	User, Password string
	// QEMU is the machine the BMC controls. Its StateDir is Dir/qemu if
	// empty; the in-band BMC arguments are appended to its Extra; Netns
	// is replaced by the BMC's and SoftOffWait by -1 (soft off presses the
	// power button and returns).
	QEMU lab.QEMUConfig
	// Binary is the ipmi_sim to run; ipmi_sim from PATH if empty.
	Binary string
}

// BMC is a running ipmi_sim with its machine.
type BMC struct {
	cfg     Config
	m       *lab.QEMUMachine
	sim     *exec.Cmd
	simDone <-chan struct{}
	ctlDone chan struct{}

	mu     sync.Mutex
	closed bool
}

const (
	startTimeout = 10 * time.Second
	// rspTimeout bounds how long an answer waits for the chassis script to
	// read it.
	rspTimeout = 5 * time.Second
)

// Start writes the configuration into Dir, starts ipmi_sim and returns
// once it listens on the LAN and for the machine's in-band connection.
// The machine is off and boots from disk.
func Start(cfg Config) (*BMC, error) {
	if cfg.Binary == "" {
		cfg.Binary = "ipmi_sim"
	}
	bin, err := exec.LookPath(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("ipmisim: %w (Debian package openipmi)", err)
	}
	if cfg.Dir == "" {
		return nil, errors.New("ipmisim: no Dir")
	}
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return nil, fmt.Errorf("ipmisim: %w", err)
	}
	if cfg.Port == 0 {
		cfg.Port = ipmi.DefaultPort
	}
	if ip := net.ParseIP(cfg.Addr).To4(); ip == nil {
		return nil, fmt.Errorf("ipmisim: address %q is not IPv4", cfg.Addr)
	}
	if hw, err := net.ParseMAC(cfg.MAC); err != nil || len(hw) != 6 {
		return nil, fmt.Errorf("ipmisim: bad MAC %q", cfg.MAC)
	}
	if cfg.Netmask == "" {
		cfg.Netmask = "255.255.255.0"
	}
	if net.ParseIP(cfg.Netmask).To4() == nil {
		return nil, fmt.Errorf("ipmisim: bad netmask %q", cfg.Netmask)
	}
	if cfg.User == "" || len(cfg.Password) > 20 || strings.ContainsAny(cfg.User+cfg.Password, "\"\n") {
		return nil, errors.New("ipmisim: need a user, and a password of at most 20 characters, without quotes")
	}

	// The in-band link: QEMU dials ipmi_sim on loopback, in whichever
	// namespace both run.
	serialPort, err := freeTCPPort()
	if err != nil {
		return nil, fmt.Errorf("ipmisim: %w", err)
	}
	q := cfg.QEMU
	if cfg.Netns != "" {
		q.Netns = cfg.Netns
	}
	// Soft off presses the power button and returns: ipmi_sim waits for
	// the chassis program, and nothing else runs meanwhile.
	q.SoftOffWait = -1
	if q.StateDir == "" {
		q.StateDir = filepath.Join(cfg.Dir, "qemu")
	}
	q.Extra = append(append([]string(nil), q.Extra...),
		"-chardev", fmt.Sprintf("socket,id=ipmi0,host=127.0.0.1,port=%d,reconnect=10", serialPort),
		"-device", "ipmi-bmc-extern,id=bmc0,chardev=ipmi0",
		"-device", "isa-ipmi-kcs,bmc=bmc0")
	m, err := lab.NewQEMU(q)
	if err != nil {
		return nil, fmt.Errorf("ipmisim: %w", err)
	}

	b := &BMC{cfg: cfg, m: m, ctlDone: make(chan struct{})}
	if err := b.writeFiles(serialPort); err != nil {
		m.Close()
		return nil, err
	}
	go b.serveChassis()

	logf, err := os.OpenFile(b.path("ipmi_sim.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		b.stopChassis()
		m.Close()
		return nil, fmt.Errorf("ipmisim: %w", err)
	}
	var argv []string
	if cfg.Netns != "" {
		argv = append(argv, "ip", "netns", "exec", cfg.Netns) // execs ipmi_sim: the pid is its
	}
	argv = append(argv, bin, "-c", b.path("lan.conf"), "-f", b.path("sim.emu"), "-s", b.path("state"), "-n")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = cfg.Dir, logf, logf
	// Its own process group, so that Close ends the scripts it runs too;
	// Pdeathsig: it dies with this process should Close never come.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Pdeathsig needs a forking thread that outlives ipmi_sim.
	done, err := lab.StartTied(cmd, func() { logf.Close() })
	if err != nil {
		logf.Close()
		b.stopChassis()
		m.Close()
		return nil, fmt.Errorf("ipmisim: %w", err)
	}
	b.sim, b.simDone = cmd, done

	// Ready once it has bound both sockets, seen in its own namespace.
	deadline := time.Now().Add(startTimeout)
	for {
		udp := listening(cmd.Process.Pid, "udp", cfg.Port, "07")
		tcp := listening(cmd.Process.Pid, "tcp", serialPort, "0A")
		if udp && tcp {
			return b, nil
		}
		select {
		case <-b.simDone:
			b.Close()
			return nil, fmt.Errorf("ipmisim: ipmi_sim exited at start: %s", tail(b.path("ipmi_sim.log")))
		default:
		}
		if time.Now().After(deadline) {
			b.Close()
			return nil, fmt.Errorf("ipmisim: ipmi_sim does not listen on %s:%d (udp %v) and 127.0.0.1:%d (tcp %v) after %s: %s",
				cfg.Addr, cfg.Port, udp, serialPort, tcp, startTimeout, tail(b.path("ipmi_sim.log")))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *BMC) path(name string) string { return filepath.Join(b.cfg.Dir, name) }

// Params are the Anvil ipmi power parameters that reach this BMC.
func (b *BMC) Params() map[string]string {
	return map[string]string{
		ipmi.ParamAddress: net.JoinHostPort(b.cfg.Addr, strconv.Itoa(b.cfg.Port)),
		ipmi.ParamUser:    b.cfg.User,
		ipmi.ParamPass:    b.cfg.Password,
		ipmi.ParamDriver:  ipmi.DriverLAN20,
		ipmi.ParamMAC:     b.cfg.MAC,
	}
}

// Serial is the guest's serial log; it accumulates across boots.
func (b *BMC) Serial() string { return b.m.SerialLog() }

// Machine is the QEMU machine behind the BMC (its command line, pid,
// boot device).
func (b *BMC) Machine() *lab.QEMUMachine { return b.m }

// Running says whether the QEMU process is alive.
func (b *BMC) Running() bool { return b.m.IsOn() }

// Kill kills QEMU behind the BMC's back, as a power loss the BMC did not
// cause; the BMC then reports the machine off.
func (b *BMC) Kill() error {
	b.m.Kill()
	return nil
}

// Close stops ipmi_sim (and any script it runs) and QEMU, by their pids.
// Everything it made stays in Dir.
func (b *BMC) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	if b.sim != nil {
		_ = syscall.Kill(-b.sim.Process.Pid, syscall.SIGKILL)
		<-b.simDone
	}
	b.stopChassis()
	return b.m.Close()
}

func (b *BMC) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// The chassis program ipmi_sim runs: it passes its arguments to this
// process through chassis.req and prints what comes back on chassis.rsp.
// An answer starting "error:" fails the request (ipmi_sim then answers
// the IPMI command with an error). ipmi_sim runs one program at a time.
const chassisScript = `#!/bin/sh
# ipmi_sim chassis_control program of an Anvil lab BMC.
d=%s
out=$(timeout 30 sh -c 'printf "%%s\n" "$1" > "$2/chassis.req" && cat "$2/chassis.rsp"' sh "$*" "$d") || {
	echo "lab chassis did not answer"; exit 1; }
case $out in error:*) printf '%%s\n' "$out"; exit 1 ;; esac
[ -z "$out" ] || printf '%%s\n' "$out"
`

// The lan_config_program: the LAN parameters are the lab's, fixed.
const lanScript = `#!/bin/sh
# ipmi_sim lan_config_program of an Anvil lab BMC.
op=$1; shift
case $op in
get)
	for k; do
		case $k in
		ip_addr) v=%s ;;
		ip_addr_src) v=static ;;
		mac_addr) v=%s ;;
		subnet_mask) v=%s ;;
		*_ip_addr) v=0.0.0.0 ;;
		*_mac_addr) v=00:00:00:00:00:00 ;;
		*) echo "unknown parameter $k"; exit 1 ;;
		esac
		echo "$k:$v"
	done ;;
check) [ "$1" = ip_addr_src ] && [ "$2" = static ] || { echo "only a static address"; exit 1; } ;;
*) echo "the lab BMC's LAN configuration is fixed"; exit 1 ;;
esac
`

// ipmiGUID is what ipmi_sim answers to Get System GUID (it sends lan.conf's
// guid as written): the machine's SMBIOS UUID in IPMI's order, least
// significant byte first, as a real server's BMC gives it. A machine
// without a parsable UUID gets a fixed one.
func ipmiGUID(uuid string) string {
	raw, err := hex.DecodeString(strings.ReplaceAll(uuid, "-", ""))
	if err != nil || len(raw) != 16 {
		return "a123456789abcdefa123456789abcdef"
	}
	slices.Reverse(raw)
	return hex.EncodeToString(raw)
}

func (b *BMC) writeFiles(serialPort int) error {
	c := b.cfg
	name := "anvil-" + strings.Map(func(r rune) rune {
		if r == '"' || r == ' ' || r == '/' {
			return '-'
		}
		return r
	}, c.QEMU.ID)
	lanConf := fmt.Sprintf(`# lan.conf of an Anvil lab BMC: see package ipmisim.
name "%s"
set_working_mc 0x20
  startlan 1
    addr %s %d
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid %s
    lan_config_program "%s"
  endlan
  serial kcs 127.0.0.1 %d codec VM
  chassis_control "%s"
  user 2 true "%s" "%s" admin 10 none md2 md5 straight
`, name, c.Addr, c.Port, ipmiGUID(c.QEMU.UUID), b.path("lan.sh"), serialPort, b.path("chassis.sh"), c.User, c.Password)
	// A BMC at 0x20: IPMI 2.0, chassis device, SDR/SEL/FRU support.
	emu := "mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\nmc_enable 0x20\n"
	files := []struct {
		name string
		body string
		mode os.FileMode
	}{
		{"lan.conf", lanConf, 0o600},
		{"sim.emu", emu, 0o644},
		{"chassis.sh", fmt.Sprintf(chassisScript, shQuote(c.Dir)), 0o755},
		{"lan.sh", fmt.Sprintf(lanScript, c.Addr, strings.ToLower(c.MAC), c.Netmask), 0o755},
	}
	if err := os.MkdirAll(b.path("state"), 0o755); err != nil {
		return fmt.Errorf("ipmisim: %w", err)
	}
	for _, f := range files {
		if err := os.WriteFile(b.path(f.name), []byte(f.body), f.mode); err != nil {
			return fmt.Errorf("ipmisim: %w", err)
		}
	}
	for _, fifo := range []string{"chassis.req", "chassis.rsp"} {
		_ = os.Remove(b.path(fifo))
		if err := syscall.Mkfifo(b.path(fifo), 0o600); err != nil {
			return fmt.Errorf("ipmisim: %s: %w", fifo, err)
		}
	}
	return nil
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// serveChassis answers the chassis script until Close.
func (b *BMC) serveChassis() {
	// QEMU is forked here with Pdeathsig: keep this thread for as long as
	// the machine can run (see Start).
	runtime.LockOSThread()
	defer close(b.ctlDone)
	for {
		f, err := os.OpenFile(b.path("chassis.req"), os.O_RDONLY, 0) // waits for a writer
		if err != nil {
			return
		}
		var lines []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		f.Close()
		if b.isClosed() {
			return
		}
		if len(lines) == 0 {
			continue
		}
		b.answer(b.chassis(strings.Fields(lines[0])))
	}
}

// stopChassis ends serveChassis: it may be waiting for a writer.
func (b *BMC) stopChassis() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	for {
		select {
		case <-b.ctlDone:
			return
		default:
		}
		if f, err := os.OpenFile(b.path("chassis.req"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// answer writes the reply for the script waiting on chassis.rsp; a script
// killed meanwhile (its timeout) leaves no reader, and the reply is lost.
func (b *BMC) answer(out string) {
	deadline := time.Now().Add(rspTimeout)
	for {
		f, err := os.OpenFile(b.path("chassis.rsp"), os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			_, _ = f.WriteString(out)
			f.Close()
			return
		}
		if !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) || b.isClosed() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// chassis carries out one request of ipmi_sim's chassis_control program:
// "get NAME..." answered "NAME:VALUE" a line, or "set NAME VALUE...".
func (b *BMC) chassis(args []string) string {
	if len(args) == 0 {
		return "error: no operation"
	}
	op, args := args[0], args[1:]
	switch op {
	case "get":
		var out []string
		for _, k := range args {
			switch k {
			case "power":
				v := "0"
				if b.m.IsOn() {
					v = "1"
				}
				out = append(out, "power:"+v)
			case "boot":
				v := "default"
				if dev, persistent, _ := b.m.BootDevice(); dev == "network" && !persistent {
					v = "pxe"
				}
				out = append(out, "boot:"+v)
			case "reset", "shutdown":
				out = append(out, k+":0")
			default:
				return "error: cannot get " + k
			}
		}
		return strings.Join(out, "\n")
	case "set":
		for i := 0; i+1 < len(args); i += 2 {
			if err := b.set(args[i], args[i+1]); err != nil {
				return "error: " + err.Error()
			}
		}
		return ""
	case "check":
		return ""
	}
	return "error: unknown operation " + op
}

func (b *BMC) set(k, v string) error {
	switch k {
	case "power":
		if v == "0" {
			return b.m.PowerOff(false)
		}
		return b.m.PowerOn()
	case "reset":
		if !b.m.IsOn() {
			return nil // nothing to reset
		}
		return b.m.PowerCycle()
	case "shutdown":
		// Press the ACPI power button and return at once; the guest decides.
		return b.m.PowerOff(true)
	case "boot":
		if v == "pxe" {
			return b.m.SetBootDevice("network", false, false)
		}
		return b.m.SetBootDevice("disk", true, false)
	case "identify":
		return nil
	}
	return fmt.Errorf("cannot set %s", k)
}

// listening says whether process pid's network namespace has a socket of
// proto (tcp or udp) on port in state st (0A: TCP listen, 07: UDP bound).
func listening(pid int, proto string, port int, st string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, proto))
	if err != nil {
		return false
	}
	want := fmt.Sprintf(":%04X", port)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == st {
			return true
		}
	}
	return false
}

func freeTCPPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return strings.TrimSpace(string(b))
}
