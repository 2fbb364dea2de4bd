package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// QEMUConfig describes a QEMU machine. ID, UUID and MACs are required.
type QEMUConfig struct {
	ID   string
	UUID string // SMBIOS system UUID
	// MACs has one NIC per address, in PCI order.
	MACs []string
	// Memory in MiB; 512 if zero.
	Memory int
	// Disk is a disk image (virtio-blk), optional.
	Disk string
	// DiskFormat is the image's format; "qcow2" for a .qcow2 file and
	// "raw" otherwise if empty.
	DiskFormat string
	// MoreDisks are further raw disk images (virtio-blk, after Disk), for
	// RAID across disks. The firmware boots Disk, the first one, as a
	// server's boot order names one disk.
	MoreDisks []string
	// NVMeDisks are raw images attached as NVMe controllers, one
	// namespace each (serial anvil-nvme-N, N from 0), for the drives'
	// own commands: QEMU's controller takes Format NVM, which zeroes the
	// namespace.
	NVMeDisks []string
	// SATADisks are raw images on an AHCI controller (serial
	// anvil-sata-N), which answer ATA commands passed through SCSI.
	SATADisks []string
	// NetDevs gives, per NIC, the tap interface that NIC is plugged into
	// (QEMU opens it: script=no, so it must exist and be up). An empty
	// name, or a NIC beyond the list, gets QEMU's user-mode network
	// (restrict=on): for local tests only, it reaches no real network and
	// nothing outside can reach it.
	NetDevs []string
	// NICModel is "virtio-net-pci" (the default), "e1000" or "e1000e".
	NICModel string
	// NoNICROM leaves out the NIC's iPXE option ROM, so the firmware's own
	// network boot runs, as on a server with a vendor PXE ROM (OVMF has
	// one; SeaBIOS has none, so a BIOS machine cannot netboot this way).
	NoNICROM bool
	// Firmware is "bios" (SeaBIOS, the default) or "efi" (OVMF). It is
	// fixed, as on a machine without a CSM: the efi flag given to
	// SetBootDevice is stored and reported, not obeyed.
	Firmware string
	// OVMFCode and OVMFVars override the OVMF code image and the template
	// for the machine's variable store; by default Debian's
	// /usr/share/OVMF/OVMF_CODE_4M.fd and OVMF_VARS_4M.fd, or
	// /usr/share/ovmf/OVMF.fd as -bios (no persistent variables) when
	// those are missing.
	OVMFCode, OVMFVars string
	// Serial is the file receiving the serial console (appended to, so it
	// keeps every boot); <StateDir>/serial.log if empty.
	Serial string
	// StateDir holds the QMP socket, the pidfile, QEMU's own output
	// (qemu.log), the serial log and the EFI variable store. If empty,
	// NewQEMU makes a temporary directory that Close removes.
	StateDir string
	// Extra arguments go last on QEMU's command line, e.g. an in-band BMC:
	// -chardev socket,id=ipmi0,host=...,port=...,reconnect=10
	// -device ipmi-bmc-extern,id=bmc0,chardev=ipmi0
	// -device isa-ipmi-kcs,bmc=bmc0
	Extra []string
	// Binary is the QEMU to run; qemu-system-x86_64 if empty.
	Binary string
	// Accel is QEMU's accelerator; "tcg" if empty.
	Accel string
	// Netns, if set, runs QEMU inside that network namespace through
	// `ip netns exec` (which execs QEMU, so the pid is QEMU's).
	Netns string
	// SoftOffWait is how long PowerOff(true) waits for the guest to act on
	// the ACPI power button before returning (the machine stays on if it
	// ignores it); 2 s if zero, no wait if negative.
	SoftOffWait time.Duration
}

// QEMUMachine is a Machine backed by a QEMU process: on means the process
// is alive. It is safe for concurrent use.
//
// Boot device, SeaBIOS: "network" persistent starts QEMU with -boot
// order=n, "network" once with -boot once=n,order=c (QEMU goes back to
// the disk at the first reset, guest-initiated or not), "disk" with
// -boot order=c. OVMF ignores -boot, so with "efi" firmware the order is
// given as bootindex on the devices (the first NIC 1; the disk 0 to come first
// or 2 to come after it), and a boot once from the network moves the
// disk back to 0 through QMP right after start: QEMU reads bootindex
// again at reset.
//
// As on real firmware, a boot once is used up by the boot that follows
// and leaves the firmware's own order in place: BootDevice then reads the
// device last set persistently ("disk" if none), so a machine set to boot
// the network first, as MAAS sites set their servers, keeps doing so
// after a BMC's one-time override (-boot once=n,order=n). PowerCycle of a running
// machine is a QMP system_reset when the reset would boot what
// BootDevice asks for, and a restart of the process otherwise (a boot
// once from the network, or a device changed since start): a reset keeps
// the boot order QEMU started with.
type QEMUMachine struct {
	cfg     QEMUConfig
	tempDir bool // StateDir was made by NewQEMU

	ops sync.Mutex // serialises power operations and Close

	mu         sync.Mutex
	proc       *qemuProc
	device     string
	persistent bool
	// base is the firmware's own boot order, set by a persistent choice:
	// a boot once is used up and leaves it in place.
	base   string
	efi    bool
	closed bool
}

// qemuProc is one run of QEMU.
type qemuProc struct {
	cmd  *exec.Cmd
	pid  int
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // Wait's result, set before done is closed
	// resetDevice is what a reset of this process boots: "network",
	// "disk", or "" when both are the same (EFI without a disk).
	resetDevice string
}

func (p *qemuProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

const (
	qemuStartTimeout = 20 * time.Second
	qemuQuitTimeout  = 10 * time.Second
	qmpTimeout       = 5 * time.Second
	// maxUnixPath is sun_path's size less its terminating NUL.
	maxUnixPath = 107
)

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// NewQEMU checks cfg and returns a machine that is off and boots from
// disk. Nothing is started.
func NewQEMU(cfg QEMUConfig) (*QEMUMachine, error) {
	if cfg.ID == "" {
		return nil, errors.New("qemu: no machine ID")
	}
	if !uuidRE.MatchString(cfg.UUID) {
		return nil, fmt.Errorf("qemu %s: UUID %q is not of the form 8-4-4-4-12 hex digits", cfg.ID, cfg.UUID)
	}
	cfg.MACs = append([]string(nil), cfg.MACs...)
	for _, mac := range cfg.MACs {
		hw, err := net.ParseMAC(mac)
		if err != nil || len(hw) != 6 {
			return nil, fmt.Errorf("qemu %s: bad MAC %q", cfg.ID, mac)
		}
	}
	if len(cfg.NetDevs) > len(cfg.MACs) {
		return nil, fmt.Errorf("qemu %s: %d net devices for %d NICs", cfg.ID, len(cfg.NetDevs), len(cfg.MACs))
	}
	cfg.NetDevs = append([]string(nil), cfg.NetDevs...)
	cfg.Extra = append([]string(nil), cfg.Extra...)
	if cfg.Memory == 0 {
		cfg.Memory = 512
	}
	if cfg.Memory < 0 {
		return nil, fmt.Errorf("qemu %s: memory %d MiB", cfg.ID, cfg.Memory)
	}
	switch cfg.NICModel {
	case "":
		cfg.NICModel = "virtio-net-pci"
	case "virtio-net-pci", "e1000", "e1000e":
	default:
		return nil, fmt.Errorf("qemu %s: NIC model %q is not virtio-net-pci, e1000 or e1000e", cfg.ID, cfg.NICModel)
	}
	switch cfg.Firmware {
	case "":
		cfg.Firmware = "bios"
	case "bios", "efi":
	default:
		return nil, fmt.Errorf("qemu %s: firmware %q is not bios or efi", cfg.ID, cfg.Firmware)
	}
	if cfg.Disk != "" && cfg.DiskFormat == "" {
		cfg.DiskFormat = "raw"
		if strings.HasSuffix(cfg.Disk, ".qcow2") {
			cfg.DiskFormat = "qcow2"
		}
	}
	if cfg.Binary == "" {
		cfg.Binary = "qemu-system-x86_64"
	}
	if cfg.Accel == "" {
		cfg.Accel = "tcg"
	}
	if cfg.SoftOffWait == 0 {
		cfg.SoftOffWait = 2 * time.Second
	}
	m := &QEMUMachine{device: "disk", persistent: true}
	if cfg.StateDir == "" {
		dir, err := os.MkdirTemp("", "anvil-qemu-")
		if err != nil {
			return nil, fmt.Errorf("qemu %s: %w", cfg.ID, err)
		}
		cfg.StateDir, m.tempDir = dir, true
	} else {
		abs, err := filepath.Abs(cfg.StateDir)
		if err != nil {
			return nil, fmt.Errorf("qemu %s: %w", cfg.ID, err)
		}
		cfg.StateDir = abs
	}
	if cfg.Serial == "" {
		cfg.Serial = filepath.Join(cfg.StateDir, "serial.log")
	}
	m.cfg = cfg
	if n := len(m.QMPSocket()); n > maxUnixPath {
		m.removeTemp()
		return nil, fmt.Errorf("qemu %s: QMP socket path %s is %d bytes, over the %d a unix socket allows: use a shorter StateDir", cfg.ID, m.QMPSocket(), n, maxUnixPath)
	}
	return m, nil
}

func (m *QEMUMachine) ID() string     { return m.cfg.ID }
func (m *QEMUMachine) UUID() string   { return m.cfg.UUID }
func (m *QEMUMachine) MACs() []string { return append([]string(nil), m.cfg.MACs...) }

// StateDir is the directory holding the machine's QMP socket, pidfile
// and logs.
func (m *QEMUMachine) StateDir() string { return m.cfg.StateDir }

// SerialLog is the file receiving the serial console.
func (m *QEMUMachine) SerialLog() string { return m.cfg.Serial }

// QMPSocket is the path of QEMU's QMP socket while it runs.
func (m *QEMUMachine) QMPSocket() string { return filepath.Join(m.cfg.StateDir, "qmp.sock") }

func (m *QEMUMachine) pidFile() string    { return filepath.Join(m.cfg.StateDir, "qemu.pid") }
func (m *QEMUMachine) qemuLog() string    { return filepath.Join(m.cfg.StateDir, "qemu.log") }
func (m *QEMUMachine) efiVars() string    { return filepath.Join(m.cfg.StateDir, "OVMF_VARS.fd") }
func (m *QEMUMachine) hasDisk() bool      { return m.cfg.Disk != "" }
func (m *QEMUMachine) isEFI() bool        { return m.cfg.Firmware == "efi" }
func (m *QEMUMachine) nicID(i int) string { return "nic" + strconv.Itoa(i) }

const diskDeviceID = "disk0"

// Pid is the QEMU process id, 0 when the machine is off.
func (m *QEMUMachine) Pid() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil || m.proc.exited() {
		return 0
	}
	return m.proc.pid
}

func (m *QEMUMachine) IsOn() bool { return m.Pid() != 0 }

func (m *QEMUMachine) SetBootDevice(device string, persistent, efi bool) error {
	if device != "network" && device != "disk" {
		return fmt.Errorf("unknown boot device %q", device)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.device, m.persistent, m.efi = device, persistent, efi
	if persistent {
		m.base = device
	}
	return nil
}

func (m *QEMUMachine) BootDevice() (string, bool, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.device, m.persistent, m.efi
}

// Args is the command line PowerOn would run now, program first (`ip
// netns exec NS` in front when Netns is set).
func (m *QEMUMachine) Args() []string {
	m.mu.Lock()
	device, persistent := m.device, m.persistent
	m.mu.Unlock()
	return m.args(device, persistent)
}

// optEscape doubles commas, QEMU's escape inside an option list.
func optEscape(s string) string { return strings.ReplaceAll(s, ",", ",,") }

// efiFirmware returns the OVMF code image and variable store template,
// or vars "" to load code with -bios.
func (m *QEMUMachine) efiFirmware() (code, vars string) {
	code, vars = m.cfg.OVMFCode, m.cfg.OVMFVars
	if code != "" {
		return code, vars
	}
	const (
		debCode = "/usr/share/OVMF/OVMF_CODE_4M.fd"
		debVars = "/usr/share/OVMF/OVMF_VARS_4M.fd"
		debBIOS = "/usr/share/ovmf/OVMF.fd"
	)
	if vars == "" {
		vars = debVars
	}
	if fileExists(debCode) && fileExists(vars) {
		return debCode, vars
	}
	if fileExists(debBIOS) {
		return debBIOS, ""
	}
	return debCode, vars // QEMU will say what is missing
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func (m *QEMUMachine) args(device string, persistent bool) []string {
	c := m.cfg
	var a []string
	if c.Netns != "" {
		a = append(a, "ip", "netns", "exec", c.Netns)
	}
	a = append(a, c.Binary,
		"-name", optEscape(c.ID),
		"-accel", c.Accel,
		// graphics=off also makes SeaBIOS write its console to the serial
		// port (there is no display).
		"-machine", "graphics=off",
		"-nodefaults", "-no-user-config", "-display", "none",
		"-m", strconv.Itoa(c.Memory),
		"-uuid", c.UUID,
		"-smbios", "type=1,uuid="+c.UUID,
		"-chardev", "file,id=serial0,append=on,path="+optEscape(c.Serial),
		"-serial", "chardev:serial0",
		"-qmp", "unix:"+optEscape(m.QMPSocket())+",server=on,wait=off",
		"-pidfile", m.pidFile(),
		// Without an entropy source the environment's DHCP client waits
		// minutes for the kernel's random pool before its first packet.
		"-device", "virtio-rng-pci",
	)
	netFirst := device == "network"
	if m.isEFI() {
		code, vars := m.efiFirmware()
		if vars == "" {
			a = append(a, "-bios", code)
		} else {
			a = append(a,
				"-drive", "if=pflash,format=raw,unit=0,readonly=on,file="+optEscape(code),
				"-drive", "if=pflash,format=raw,unit=1,file="+optEscape(m.efiVars()))
		}
	} else {
		boot := "order=c"
		if netFirst && persistent {
			boot = "order=n"
		} else if netFirst && m.lockedBase() == "network" {
			boot = "once=n,order=n"
		} else if netFirst {
			boot = "once=n,order=c"
		} else if !persistent && m.lockedBase() == "network" {
			boot = "once=c,order=n"
		}
		a = append(a, "-boot", boot)
	}
	if c.Disk != "" {
		dev := "virtio-blk-pci,drive=drive0,id=" + diskDeviceID
		if m.isEFI() {
			dev += ",bootindex=" + strconv.Itoa(m.diskBootIndex(netFirst))
		}
		a = append(a,
			"-drive", "if=none,id=drive0,format="+c.DiskFormat+",file="+optEscape(c.Disk),
			"-device", dev)
	}
	for i, d := range c.MoreDisks {
		id := "drive" + strconv.Itoa(i+1)
		a = append(a, "-drive", "if=none,id="+id+",format=raw,file="+optEscape(d),
			"-device", "virtio-blk-pci,drive="+id+",id=disk"+strconv.Itoa(i+1))
	}
	for i, d := range c.NVMeDisks {
		id := "nvme" + strconv.Itoa(i)
		a = append(a, "-drive", "if=none,id="+id+",format=raw,file="+optEscape(d),
			"-device", "nvme,drive="+id+",serial=anvil-nvme-"+strconv.Itoa(i))
	}
	if len(c.SATADisks) > 0 {
		a = append(a, "-device", "ahci,id=ahci0")
	}
	for i, d := range c.SATADisks {
		id := "sata" + strconv.Itoa(i)
		a = append(a, "-drive", "if=none,id="+id+",format=raw,file="+optEscape(d),
			"-device", "ide-hd,drive="+id+",bus=ahci0."+strconv.Itoa(i)+",serial=anvil-sata-"+strconv.Itoa(i))
	}
	for i, mac := range c.MACs {
		nd := "n" + strconv.Itoa(i)
		tap := ""
		if i < len(c.NetDevs) {
			tap = c.NetDevs[i]
		}
		if tap != "" {
			a = append(a, "-netdev", "tap,id="+nd+",ifname="+optEscape(tap)+",script=no,downscript=no")
		} else {
			// User-mode networking: for local tests only.
			a = append(a, "-netdev", "user,id="+nd+",restrict=on")
		}
		dev := c.NICModel + ",netdev=" + nd + ",mac=" + mac + ",id=" + m.nicID(i)
		if c.NoNICROM {
			dev += ",romfile="
		}
		if m.isEFI() && i == 0 {
			// Servers network-boot from one NIC: OVMF orders its boot
			// options by bootindex, and one on every NIC would have a
			// machine the rack sends to its disk try each other NIC's
			// PXE and HTTP boot first.
			dev += ",bootindex=1"
		}
		a = append(a, "-device", dev)
	}
	return append(a, c.Extra...)
}

// diskBootIndex puts the disk before the boot NIC (0) or after it.
func (m *QEMUMachine) diskBootIndex(netFirst bool) int {
	if netFirst {
		return min(len(m.cfg.MACs), 1) + 1
	}
	return 0
}

// PowerOn starts QEMU unless it runs already; it returns once QMP
// answers.
func (m *QEMUMachine) PowerOn() error {
	m.ops.Lock()
	defer m.ops.Unlock()
	if err := m.checkOpen(); err != nil {
		return err
	}
	if m.IsOn() {
		return nil
	}
	return m.start()
}

// PowerOff ends the machine. Hard: QMP quit, or SIGKILL when QMP fails
// or QEMU lingers; it returns once the process is gone. Soft: QMP
// system_powerdown (the ACPI power button), then wait up to SoftOffWait
// for the guest to power off; a guest that ignores it stays on and that
// is no error.
func (m *QEMUMachine) PowerOff(soft bool) error {
	m.ops.Lock()
	defer m.ops.Unlock()
	if err := m.checkOpen(); err != nil {
		return err
	}
	p := m.running()
	if p == nil {
		return nil
	}
	if !soft {
		m.stop(p)
		return nil
	}
	if _, err := m.QMP("system_powerdown", nil); err != nil {
		if p.exited() {
			return nil // it went off meanwhile
		}
		return fmt.Errorf("qemu %s: soft power off: %w", m.cfg.ID, err)
	}
	if m.cfg.SoftOffWait > 0 {
		select {
		case <-p.done:
		case <-time.After(m.cfg.SoftOffWait):
		}
	}
	return nil
}

// PowerCycle resets a running machine (see QEMUMachine for when that is
// a restart of QEMU instead) and starts one that is off.
func (m *QEMUMachine) PowerCycle() error {
	m.ops.Lock()
	defer m.ops.Unlock()
	if err := m.checkOpen(); err != nil {
		return err
	}
	p := m.running()
	if p == nil {
		return m.start()
	}
	m.mu.Lock()
	device, persistent := m.device, m.persistent
	m.mu.Unlock()
	if !needsRestart(p.resetDevice, device, persistent) {
		if _, err := m.QMP("system_reset", nil); err == nil {
			m.booted()
			return nil
		}
		// QMP failed: fall back to a restart.
	}
	m.stop(p)
	return m.start()
}

// needsRestart says whether a reset, which boots resetDevice, would not
// do what the stored boot device asks.
func needsRestart(resetDevice, device string, persistent bool) bool {
	if resetDevice == "" {
		return false // the same device either way
	}
	if device == "network" && !persistent {
		return true // a reset cannot boot the network once
	}
	return resetDevice != device
}

// Kill sends SIGKILL to QEMU, as if the power were lost behind Anvil's
// back, and waits for it to be gone.
func (m *QEMUMachine) Kill() {
	if p := m.running(); p != nil {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Close kills QEMU if it runs and removes the QMP socket and pidfile
// (and StateDir if NewQEMU made it). The machine cannot be used after.
func (m *QEMUMachine) Close() error {
	m.ops.Lock()
	defer m.ops.Unlock()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	p := m.proc
	m.mu.Unlock()
	if p != nil && !p.exited() {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	_ = os.Remove(m.QMPSocket())
	_ = os.Remove(m.pidFile())
	m.removeTemp()
	return nil
}

func (m *QEMUMachine) removeTemp() {
	if m.tempDir {
		_ = os.RemoveAll(m.cfg.StateDir)
	}
}

func (m *QEMUMachine) checkOpen() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fmt.Errorf("qemu %s: closed", m.cfg.ID)
	}
	return nil
}

// running returns the live process, or nil.
func (m *QEMUMachine) running() *qemuProc {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil || m.proc.exited() {
		return nil
	}
	return m.proc
}

// lockedBase is baseDevice for a caller not holding m.mu.
func (m *QEMUMachine) lockedBase() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.baseDevice()
}

// baseDevice is the firmware's own first boot device, which a boot once
// leaves in place: the last one set persistently, else the disk. The
// caller holds m.mu.
func (m *QEMUMachine) baseDevice() string {
	if m.base == "" {
		return "disk"
	}
	return m.base
}

// booted uses up a boot once, as firmware does.
func (m *QEMUMachine) booted() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.persistent {
		m.device, m.persistent = m.baseDevice(), true
	}
}

// stop ends p: QMP quit, SIGKILL if that fails or QEMU takes too long.
func (m *QEMUMachine) stop(p *qemuProc) {
	if _, err := m.QMP("quit", nil); err == nil {
		select {
		case <-p.done:
			return
		case <-time.After(qemuQuitTimeout):
		}
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// start runs QEMU and waits until QMP answers. The caller holds ops.
func (m *QEMUMachine) start() error {
	m.mu.Lock()
	device, persistent := m.device, m.persistent
	m.mu.Unlock()
	argv := m.args(device, persistent)

	if err := os.MkdirAll(m.cfg.StateDir, 0o755); err != nil {
		return fmt.Errorf("qemu %s: %w", m.cfg.ID, err)
	}
	if err := os.Remove(m.QMPSocket()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("qemu %s: %w", m.cfg.ID, err)
	}
	if m.isEFI() {
		if _, vars := m.efiFirmware(); vars != "" && !fileExists(m.efiVars()) {
			if err := copyFile(vars, m.efiVars()); err != nil {
				return fmt.Errorf("qemu %s: EFI variable store: %w", m.cfg.ID, err)
			}
		}
	}
	logf, err := os.OpenFile(m.qemuLog(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("qemu %s: %w", m.cfg.ID, err)
	}
	logStart, _ := logf.Seek(0, io.SeekEnd)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig: QEMU dies with this process, should it die without Close.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("qemu %s: %w", m.cfg.ID, err)
	}
	p := &qemuProc{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	m.mu.Lock()
	m.proc = p
	m.mu.Unlock()

	failed := func(why string) error {
		_ = cmd.Process.Kill()
		<-p.done
		msg := strings.TrimSpace(readFrom(m.qemuLog(), logStart, 2048))
		if msg != "" {
			msg = ": " + msg
		}
		return fmt.Errorf("qemu %s: %s (%v)%s", m.cfg.ID, why, p.err, msg)
	}
	deadline := time.Now().Add(qemuStartTimeout)
	for {
		if p.exited() {
			return failed("exited at start")
		}
		if _, err := m.QMP("query-status", nil); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return failed("QMP did not answer within " + qemuStartTimeout.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	p.resetDevice = "disk"
	base := m.lockedBase()
	if device == "network" && (persistent || base == "network") {
		p.resetDevice = "network"
	}
	if m.isEFI() {
		switch {
		case !m.hasDisk():
			p.resetDevice = ""
		case device == "network" && !persistent && base != "network":
			// This boot takes the network; from the next reset on, the disk
			// comes first again.
			_, err := m.QMP("qom-set", map[string]any{
				"path": "/machine/peripheral/" + diskDeviceID, "property": "bootindex", "value": m.diskBootIndex(false),
			})
			if err != nil {
				p.resetDevice = "network"
			}
		}
	}
	m.booted()
	return nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// readFrom returns up to max bytes of a file from offset off, the last
// ones if there are more.
func readFrom(path string, off int64, max int) string {
	b, err := os.ReadFile(path)
	if err != nil || off > int64(len(b)) {
		return ""
	}
	b = b[off:]
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// QMP runs one command on the running QEMU's monitor and returns its
// "return" value. Events that arrive meanwhile are dropped.
func (m *QEMUMachine) QMP(command string, arguments any) (json.RawMessage, error) {
	c, err := dialQMP(m.QMPSocket(), qmpTimeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.execute(command, arguments)
}

// qmpClient is a QMP connection: JSON objects over a unix socket.
type qmpClient struct {
	conn net.Conn
	dec  *json.Decoder
}

type qmpMessage struct {
	QMP    json.RawMessage `json:"QMP"`
	Event  string          `json:"event"`
	Return json.RawMessage `json:"return"`
	Error  *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
}

// dialQMP connects, reads the greeting and leaves capabilities
// negotiation; the whole exchange on the connection must end within
// timeout.
func dialQMP(path string, timeout time.Duration) (*qmpClient, error) {
	conn, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return nil, fmt.Errorf("qmp: %w", err)
	}
	_ = conn.SetDeadline(time.Now().Add(timeout))
	c := &qmpClient{conn: conn, dec: json.NewDecoder(conn)}
	var greeting qmpMessage
	if err := c.dec.Decode(&greeting); err != nil {
		conn.Close()
		return nil, fmt.Errorf("qmp greeting: %w", err)
	}
	if greeting.QMP == nil {
		conn.Close()
		return nil, errors.New("qmp: no greeting")
	}
	if _, err := c.execute("qmp_capabilities", nil); err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

func (c *qmpClient) Close() error { return c.conn.Close() }

func (c *qmpClient) execute(command string, arguments any) (json.RawMessage, error) {
	req := map[string]any{"execute": command}
	if arguments != nil {
		req["arguments"] = arguments
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := c.conn.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("qmp %s: %w", command, err)
	}
	for {
		var msg qmpMessage
		if err := c.dec.Decode(&msg); err != nil {
			if command == "quit" && errors.Is(err, io.EOF) {
				return nil, nil // QEMU went before answering
			}
			return nil, fmt.Errorf("qmp %s: %w", command, err)
		}
		switch {
		case msg.Error != nil:
			return nil, fmt.Errorf("qmp %s: %s: %s", command, msg.Error.Class, msg.Error.Desc)
		case msg.Return != nil:
			return msg.Return, nil
		}
		// An event (or anything else): keep reading.
	}
}
