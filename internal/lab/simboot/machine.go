package simboot

import (
	"bufio"
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
)

// Machine is one simulated machine.
type Machine struct {
	// MACs are its NICs, lower case with colons; it boots from the first.
	MACs []string
	// UUID is its SMBIOS system UUID.
	UUID string
	// DropDHCP is how many of its first DHCP packets are lost on the
	// wire (each costs one retransmission timeout).
	DropDHCP int
	// Silent makes its agent stop reporting: commissioning never sends
	// OK (nor anything after WORKING).
	Silent bool
}

// Config is what every machine of a boot shares.
type Config struct {
	Net *Net
	// RackHTTP is the boot HTTP server ("http://192.0.2.1:5248") the
	// DHCP answer would chain iPXE to.
	RackHTTP string
	// DHCPTimeout is the first retransmission timeout (default 1 s,
	// doubling up to 8 s, each randomised by ±1 s as RFC 2131 4.1 asks,
	// so a storm's retransmissions do not arrive in lockstep);
	// DHCPAttempts bounds the transmissions per message (default 8).
	DHCPTimeout  time.Duration
	DHCPAttempts int
}

// Stage names, in boot order.
const (
	StageDHCP   = "dhcp"
	StageConfig = "config"
	StageFiles  = "kernel+initrd"
	StageHello  = "hello"
	StageAgent  = "enlist/commission"
)

// Stages lists the stage names in order.
var Stages = []string{StageDHCP, StageConfig, StageFiles, StageHello, StageAgent}

// Result is what one boot did.
type Result struct {
	MAC      string
	IP       netip.Addr
	BootFile string // what DHCP told the client to boot
	Config   string // the iPXE config used: ipxe.cfg-<mac> or the default
	Purpose  string // anvil.purpose
	Action   string // Hello's answer
	Next     string // the answer to Enlist (poweroff, proceed)
	SystemID string
	Bytes    int64 // kernel and initrd
	// DHCPRetries counts retransmissions.
	DHCPRetries int
	// Times holds each stage's duration by stage name.
	Times map[string]time.Duration
	// FailedStage and Err say where and why the boot stopped.
	FailedStage string
	Err         error
}

func (r *Result) fail(stage string, err error) Result {
	r.FailedStage, r.Err = stage, err
	return *r
}

// Boot runs the machine's boot until its agent is done: powered off after
// enlistment, commissioning reported (unless Silent), or an error.
func (m *Machine) Boot(ctx context.Context, cfg Config) Result {
	if cfg.DHCPTimeout <= 0 {
		cfg.DHCPTimeout = time.Second
	}
	if cfg.DHCPAttempts <= 0 {
		cfg.DHCPAttempts = 8
	}
	r := Result{Times: map[string]time.Duration{}}
	if len(m.MACs) == 0 {
		return r.fail(StageDHCP, errors.New("no MAC"))
	}
	r.MAC = strings.ToLower(m.MACs[0])
	hw, err := net.ParseMAC(r.MAC)
	if err != nil {
		return r.fail(StageDHCP, err)
	}

	t := time.Now()
	ack, err := m.dhcp(ctx, cfg, hw, &r)
	r.Times[StageDHCP] = time.Since(t)
	if err != nil {
		return r.fail(StageDHCP, err)
	}
	r.IP, _ = netip.AddrFromSlice(ack.YourIPAddr.To4())
	r.BootFile = ack.BootFileName
	// From here on the machine talks from its leased address.
	hc, err := cfg.Net.clientFrom(r.IP)
	if err != nil {
		return r.fail(StageDHCP, err)
	}
	defer hc.CloseIdleConnections()

	t = time.Now()
	base := strings.TrimRight(cfg.RackHTTP, "/")
	script, used, err := fetchConfig(ctx, hc, base, r.MAC)
	r.Times[StageConfig] = time.Since(t)
	if err != nil {
		return r.fail(StageConfig, err)
	}
	r.Config = used
	bc, err := parseIPXE(script, r.MAC)
	if err != nil {
		return r.fail(StageConfig, err)
	}
	r.Purpose = bc.params[agentapi.ParamPurpose]

	t = time.Now()
	for _, u := range []string{bc.kernel, bc.initrd} {
		n, err := download(ctx, hc, u)
		r.Bytes += n
		if err != nil {
			r.Times[StageFiles] = time.Since(t)
			return r.fail(StageFiles, err)
		}
	}
	r.Times[StageFiles] = time.Since(t)

	md := bc.params[agentapi.ParamURL]
	if md == "" {
		return r.fail(StageHello, fmt.Errorf("%s has no %s=", used, agentapi.ParamURL))
	}
	cl := &agentapi.Client{Base: md, HTTP: hc}
	id := agentapi.Identity{MACs: m.macs(), BootMAC: r.MAC, UUID: m.UUID, Arch: "amd64/generic", Firmware: "uefi"}
	t = time.Now()
	hello, err := cl.Hello(ctx, agentapi.HelloRequest{Identity: id, Purpose: r.Purpose, Enrol: bc.params[agentapi.ParamEnrol]})
	r.Times[StageHello] = time.Since(t)
	if err != nil {
		return r.fail(StageHello, err)
	}
	r.Action, r.SystemID = hello.Action, hello.SystemID

	t = time.Now()
	switch hello.Action {
	case agentapi.ActionEnlist:
		resp, err := cl.Enlist(ctx, agentapi.EnlistRequest{Identity: id, Inventory: m.inventory()})
		if err != nil {
			r.Times[StageAgent] = time.Since(t)
			return r.fail(StageAgent, err)
		}
		r.Next, r.SystemID = resp.Action, resp.SystemID
		if resp.Action == agentapi.ActionProceed {
			cl.Token = resp.Token
			if err := m.commission(ctx, cl, resp.Phase); err != nil {
				r.Times[StageAgent] = time.Since(t)
				return r.fail(StageAgent, err)
			}
		}
	case agentapi.ActionProceed:
		cl.Token = hello.Token
		if err := m.commission(ctx, cl, hello.Phase); err != nil {
			r.Times[StageAgent] = time.Since(t)
			return r.fail(StageAgent, err)
		}
	}
	r.Times[StageAgent] = time.Since(t)
	return r
}

// commission runs a commissioning phase: WORKING, then OK with the
// inventory. Other phases are not simulated.
func (m *Machine) commission(ctx context.Context, cl *agentapi.Client, phase string) error {
	if phase != agentapi.PhaseCommissioning {
		return fmt.Errorf("phase %q is not simulated", phase)
	}
	if err := cl.Signal(ctx, agentapi.StatusWorking, "", nil); err != nil {
		return err
	}
	if m.Silent {
		return nil
	}
	inv, err := json.Marshal(m.inventory())
	if err != nil {
		return err
	}
	return cl.Signal(ctx, agentapi.StatusOK, "", map[string][]byte{agentapi.InventoryFile: inv})
}

func (m *Machine) macs() []string {
	out := make([]string, len(m.MACs))
	for i, s := range m.MACs {
		out[i] = strings.ToLower(s)
	}
	return out
}

// inventory is a small plausible machine.
func (m *Machine) inventory() *machine.Inventory {
	inv := &machine.Inventory{
		CPU:       machine.CPU{Model: "Simulated CPU", Sockets: 1, Cores: 4, Threads: 8, MHz: 2400},
		MemoryMiB: 16384,
		Disks:     []machine.Disk{{Name: "sda", Model: "SIMDISK", Serial: "SIM-" + strings.ReplaceAll(m.MACs[0], ":", ""), Size: 256 << 30, BlockSize: 512}},
		Firmware:  "uefi",
		SMBIOS:    machine.SMBIOS{Vendor: "Anvil", Product: "simboot", UUID: m.UUID},
	}
	for i, mac := range m.macs() {
		inv.NICs = append(inv.NICs, machine.NIC{Name: fmt.Sprintf("eth%d", i), MAC: mac, Driver: "virtio_net", Link: i == 0, SpeedMbps: 10000})
	}
	return inv
}

// dhcp runs DISCOVER/OFFER, REQUEST/ACK as iPXE does (user class iPXE,
// client architecture x86-64 UEFI), broadcast flag set.
func (m *Machine) dhcp(ctx context.Context, cfg Config, hw net.HardwareAddr, r *Result) (*dhcpv4.DHCPv4, error) {
	drops := m.DropDHCP
	mods := []dhcpv4.Modifier{
		dhcpv4.WithBroadcast(true),
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
		dhcpv4.WithOption(dhcpv4.OptUserClass("iPXE")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
	}
	send := func(req *dhcpv4.DHCPv4, want dhcpv4.MessageType) (*dhcpv4.DHCPv4, error) {
		wait := cfg.DHCPTimeout
		var last error
		for i := 0; i < cfg.DHCPAttempts; i++ {
			if i > 0 {
				r.DHCPRetries++
			}
			drop := drops > 0
			if drop {
				drops--
			}
			resp, err := cfg.Net.exchange(ctx, req, drop, jitter(wait), want)
			if err == nil {
				return resp, nil
			}
			if !errors.Is(err, errTimeout) {
				return nil, err
			}
			last = err
			wait = min(2*wait, 8*time.Second)
		}
		return nil, fmt.Errorf("%s: %w after %d attempts", want, last, cfg.DHCPAttempts)
	}
	disc, err := dhcpv4.NewDiscovery(hw, mods...)
	if err != nil {
		return nil, err
	}
	offer, err := send(disc, dhcpv4.MessageTypeOffer)
	if err != nil {
		return nil, err
	}
	req, err := dhcpv4.NewRequestFromOffer(offer, mods...)
	if err != nil {
		return nil, err
	}
	return send(req, dhcpv4.MessageTypeAck)
}

// jitter randomises a retransmission timeout by ±1 s (±half of it when
// shorter than 2 s).
func jitter(d time.Duration) time.Duration {
	span := min(time.Second, d/2)
	if span <= 0 {
		return d
	}
	return d - span + rand.N(2*span)
}

// fetchConfig reads ipxe.cfg-<mac>, or on 404 the default config, as the
// chain in ipxe.cfg does.
func fetchConfig(ctx context.Context, hc *http.Client, base, mac string) (string, string, error) {
	for _, name := range []string{"ipxe.cfg-" + mac, "ipxe.cfg-default-amd64"} {
		b, code, err := get(ctx, hc, base+"/"+name, 1<<20)
		if err != nil {
			return "", "", err
		}
		if code == http.StatusNotFound {
			continue
		}
		if code != http.StatusOK {
			return "", "", fmt.Errorf("GET %s: %d", name, code)
		}
		return string(b), name, nil
	}
	return "", "", errors.New("no iPXE config: the per-MAC one and the default are both missing")
}

func get(ctx context.Context, hc *http.Client, u string, limit int64) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	return b, resp.StatusCode, err
}

// download reads a file to the end and returns its size.
func download(ctx context.Context, hc *http.Client, u string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return n, fmt.Errorf("GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("GET %s: %d", u, resp.StatusCode)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return n, fmt.Errorf("GET %s: %d bytes of %d", u, n, resp.ContentLength)
	}
	return n, nil
}

// bootConfig is what an iPXE boot config says.
type bootConfig struct {
	kernel, initrd string
	params         map[string]string
}

// parseIPXE reads the kernel line (URL and parameters) and the initrd
// line of an Anvil iPXE boot config; ${mac...} is expanded as iPXE would.
func parseIPXE(script, mac string) (bootConfig, error) {
	bc := bootConfig{params: map[string]string{}}
	expand := strings.NewReplacer("${mac:hexhyp}", strings.ReplaceAll(mac, ":", "-"), "${mac}", mac, "${net0/mac}", mac)
	sc := bufio.NewScanner(strings.NewReader(script))
	for sc.Scan() {
		line, _, _ := strings.Cut(strings.TrimSpace(sc.Text()), "||")
		f := strings.Fields(expand.Replace(line))
		if len(f) == 0 {
			continue
		}
		cmd, args := f[0], f[1:]
		if cmd != "kernel" && cmd != "initrd" {
			continue
		}
		for len(args) > 0 && strings.HasPrefix(args[0], "--") {
			if strings.Contains(args[0], "=") {
				args = args[1:]
			} else {
				args = args[min(2, len(args)):]
			}
		}
		if len(args) == 0 {
			return bc, fmt.Errorf("iPXE config: %s without a URL", cmd)
		}
		if cmd == "initrd" {
			bc.initrd = args[0]
			continue
		}
		bc.kernel = args[0]
		for _, p := range args[1:] {
			k, v, _ := strings.Cut(p, "=")
			bc.params[k] = v
		}
	}
	if bc.kernel == "" || bc.initrd == "" {
		return bc, fmt.Errorf("iPXE config boots no kernel and initrd:\n%s", script)
	}
	return bc, nil
}

// NewMAC returns the i-th MAC of a locally administered block
// (02:a5:xx:xx:xx:xx), and NewUUID a random SMBIOS UUID.
func NewMAC(i int) string {
	return fmt.Sprintf("02:a5:%02x:%02x:%02x:%02x", byte(i>>24), byte(i>>16), byte(i>>8), byte(i))
}

// NewUUID returns a random version-4 UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// DHCPOnly runs the DHCP exchange alone (a probe that the server answers).
func (m *Machine) DHCPOnly(ctx context.Context, cfg Config) error {
	if cfg.DHCPTimeout <= 0 {
		cfg.DHCPTimeout = time.Second
	}
	if cfg.DHCPAttempts <= 0 {
		cfg.DHCPAttempts = 8
	}
	if len(m.MACs) == 0 {
		return errors.New("no MAC")
	}
	hw, err := net.ParseMAC(m.MACs[0])
	if err != nil {
		return err
	}
	_, err = m.dhcp(ctx, cfg, hw, &Result{})
	return err
}
