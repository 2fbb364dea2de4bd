// Package simbmc runs OpenIPMI's ipmi_sim (Debian package openipmi) as a
// BMC with no machine behind it: its chassis is a shell script keeping
// the power state in files and logging every call, so a test can count
// the commands that reached the BMC. Inside a network namespace it sits
// behind a relay that records the address every datagram came from, since
// ipmi_sim does not say who sent a command: tests check which rack talked
// to which BMC.
package simbmc

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/testutil/netns"
)

// chassis is the BMC's chassis control program. A power on is recorded at
// once and takes effect $delay seconds later, as a real server takes a
// moment to come up: the command is then in its verification, in flight,
// for a while.
const chassis = `#!/bin/sh
d=$1; delay=$2; op=$3; shift 3
echo "$op $*" >> "$d/calls"
case $op in
get) for k in "$@"; do
       v=$(cat "$d/$k" 2>/dev/null)
       [ -n "$v" ] || { [ "$k" = boot ] && v=none || v=0; }
       printf '%s:%s\n' "$k" "$v"
     done ;;
set) while [ $# -ge 2 ]; do
       if [ "$1" = power ] && [ "$2" = 1 ] && [ "$delay" != 0 ]; then
         ( sleep "$delay"; printf 1 > "$d/power" ) </dev/null >/dev/null 2>&1 &
       else
         printf '%s' "$2" > "$d/$1"
       fi
       shift 2
     done ;;
esac
`

// User and Password are the BMC's administrator account.
const (
	User     = "admin"
	Password = "Sim-secret1"
)

// Config says where a BMC listens.
type Config struct {
	// NS, when set, is the namespace the BMC lives in: Addr/Bits is
	// added to Dev there and the relay listens on Addr:623. Without NS,
	// ipmi_sim itself listens on Addr (a loopback address) at a free port.
	NS   *netns.NS
	Dev  string // default br0
	Addr string
	Bits int // default 24
	// Delay is how many seconds a power on takes to show.
	Delay int
}

// BMC is a running ipmi_sim.
type BMC struct {
	Addr string
	Port int // where a driver sends: 623 behind the relay
	hw   string
	mu   sync.Mutex
	from map[string]int // source address → datagrams
}

// Params are the machine's IPMI power fields for the MAAS API.
func (b *BMC) Params() url.Values {
	return url.Values{"power_type": {"ipmi"}, "power_parameters_power_address": {net.JoinHostPort(b.Addr, strconv.Itoa(b.Port))},
		"power_parameters_power_user": {User}, "power_parameters_power_pass": {Password}}
}

// Calls is the chassis log: one line per call ("set power 1", "get power").
func (b *BMC) Calls() string {
	s, _ := os.ReadFile(filepath.Join(b.hw, "calls"))
	return string(s)
}

// Count is how many calls of the log are exactly line.
func (b *BMC) Count(line string) int {
	n := 0
	for _, l := range strings.Split(b.Calls(), "\n") {
		if strings.TrimSpace(l) == line {
			n++
		}
	}
	return n
}

// On says whether the chassis is powered on.
func (b *BMC) On() bool {
	s, _ := os.ReadFile(filepath.Join(b.hw, "power"))
	return string(s) == "1"
}

// Sources are the addresses datagrams came from, with their counts
// (empty without a namespace: there is no relay).
func (b *BMC) Sources() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for k, v := range b.from {
		out[k] = v
	}
	return out
}

// Start runs ipmi_sim (on loopback inside cfg.NS, behind the relay) and
// returns once it answers an RMCP ping; everything stops when the test
// ends. The test is skipped without ipmi_sim.
func Start(t testing.TB, cfg Config) *BMC {
	t.Helper()
	if _, err := exec.LookPath("ipmi_sim"); err != nil {
		t.Skip("ipmi_sim is not installed (Debian package openipmi; scripts/test.sh installs it)")
	}
	if cfg.Dev == "" {
		cfg.Dev = "br0"
	}
	if cfg.Bits == 0 {
		cfg.Bits = 24
	}
	dir := t.TempDir()
	b := &BMC{Addr: cfg.Addr, Port: 623, hw: filepath.Join(dir, "hw"), from: map[string]int{}}
	state := filepath.Join(dir, "state")
	for _, d := range []string{b.hw, state} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ip := net.ParseIP(cfg.Addr).To4()
	if ip == nil {
		t.Fatalf("simbmc: %q is not an IPv4 address", cfg.Addr)
	}
	ns := cfg.NS
	simAddr, port := "127.0.0.1", 20000+int(ip[3])
	if ns != nil {
		ns.Ip("addr", "add", fmt.Sprintf("%s/%d", cfg.Addr, cfg.Bits), "dev", cfg.Dev)
	} else {
		pc, err := net.ListenPacket("udp4", cfg.Addr+":0")
		if err != nil {
			t.Fatal(err)
		}
		simAddr, port = cfg.Addr, pc.LocalAddr().(*net.UDPAddr).Port
		b.Port = port
		pc.Close()
	}
	lan := fmt.Sprintf(`name "bmc"
set_working_mc 0x20
  startlan 1
    addr %s %d
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
  chassis_control "%s %s %d"
  user 2 true "%s" "%s" admin 10 none md2 md5 straight
`, simAddr, port, filepath.Join(dir, "chassis.sh"), b.hw, cfg.Delay, User, Password)
	emu := "mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\nmc_enable 0x20\n"
	for name, body := range map[string]string{"lan.conf": lan, "sim.emu": emu, "chassis.sh": chassis} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	args := []string{"ipmi_sim", "-c", filepath.Join(dir, "lan.conf"), "-f", filepath.Join(dir, "sim.emu"), "-n", "-s", state}
	if ns != nil {
		args = append([]string{"ip", "netns", "exec", ns.Name}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("ipmi_sim %s:\n%s\ncalls:\n%s", cfg.Addr, out.String(), b.Calls())
		}
	})
	// Up when it answers an RMCP ping, as a rack's probe sends.
	ready := func() bool {
		probe := func() error {
			return rack.Probe(context.Background(), "ipmi://"+net.JoinHostPort(simAddr, strconv.Itoa(port)))
		}
		if ns != nil {
			return ns.Do(probe) == nil
		}
		return probe() == nil
	}
	for deadline := time.Now().Add(10 * time.Second); !ready(); {
		if time.Now().After(deadline) {
			t.Fatalf("ipmi_sim on %s does not answer:\n%s", cfg.Addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ns == nil {
		return b
	}
	var front net.PacketConn
	if err := ns.Do(func() (err error) { front, err = net.ListenPacket("udp4", cfg.Addr+":623"); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close() })
	upstream := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	ns.Go(func() { b.relay(front, upstream) })
	return b
}

// relay forwards datagrams to ipmi_sim, one upstream socket per client
// (opened on this goroutine's thread, in the namespace), and logs who
// sent them.
func (b *BMC) relay(front net.PacketConn, upstream *net.UDPAddr) {
	ups := map[string]*net.UDPConn{}
	buf := make([]byte, 2048)
	for {
		n, from, err := front.ReadFrom(buf)
		if err != nil {
			return
		}
		key := from.String()
		up, ok := ups[key]
		if !ok {
			if up, err = net.DialUDP("udp4", nil, upstream); err != nil {
				continue
			}
			ups[key] = up
			go func(up *net.UDPConn, to net.Addr) {
				rb := make([]byte, 2048)
				for {
					n, err := up.Read(rb)
					if err != nil {
						return
					}
					_, _ = front.WriteTo(rb[:n], to)
				}
			}(up, from)
		}
		b.mu.Lock()
		b.from[from.(*net.UDPAddr).IP.String()]++
		b.mu.Unlock()
		_, _ = up.Write(buf[:n])
	}
}
