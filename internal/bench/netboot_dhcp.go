package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"

	"github.com/anvilmetal/anvil/internal/dhcp"
	"github.com/anvilmetal/anvil/internal/netns"
)

// The pool every server hands out: the /15 minus the two link addresses,
// about 130,000 leases, more than any default run asks for.
const (
	nbPoolStart = "198.18.1.0"
	nbPoolEnd   = "198.19.255.254"
	nbLeaseSecs = 3600
)

// dhcpInstance is one running DHCP server.
type dhcpInstance struct {
	cpu    func() time.Duration // CPU time used so far
	failed func() error         // non-nil once the server has died
	stop   func()
}

// dhcpServer is a contender: a name for the table and how to start it in
// the server namespace with its files in dir.
type dhcpServer struct {
	Name, Store string
	bin         string // program that must be installed ("" for Anvil)
	start       func(tp *nbTopo, dir string) (*dhcpInstance, error)
}

func dhcpServers() []dhcpServer {
	return []dhcpServer{
		{Name: "anvil", Store: "memory", start: func(tp *nbTopo, dir string) (*dhcpInstance, error) {
			return startAnvilDHCP(tp, dhcp.NewMemStore(), nil)
		}},
		{Name: "anvil", Store: "file, fsync per ack", start: func(tp *nbTopo, dir string) (*dhcpInstance, error) {
			fs, err := dhcp.OpenFileStore(filepath.Join(dir, "anvil-leases.jsonl"))
			if err != nil {
				return nil, err
			}
			return startAnvilDHCP(tp, fs, fs.Close)
		}},
		{Name: "kea", Store: "memfile, persist=true (no fsync)", bin: "kea-dhcp4", start: startKea},
		{Name: "dnsmasq", Store: "lease file, all rewritten + fsync per change", bin: "dnsmasq", start: startDnsmasq},
	}
}

func nbDHCPConfig() dhcp.Config {
	return dhcp.Config{Subnets: []dhcp.Subnet{{
		CIDR:      netip.MustParsePrefix("198.18.0.0/15"),
		Gateway:   netip.MustParseAddr("198.18.0.1"),
		Dynamic:   []dhcp.Range{{Start: netip.MustParseAddr(nbPoolStart), End: netip.MustParseAddr(nbPoolEnd)}},
		LeaseTime: nbLeaseSecs * time.Second,
		Enabled:   true,
	}}}
}

// startAnvilDHCP runs internal/dhcp in this process, as the rack does:
// ListenAndServe on the interface, from a thread locked into the server
// namespace (its sockets are made there). Its CPU is this process's,
// which is otherwise idle while perfdhcp runs.
func startAnvilDHCP(tp *nbTopo, store dhcp.LeaseStore, closeStore func() error) (*dhcpInstance, error) {
	srv, err := dhcp.NewServer(nbDHCPConfig(), store, dhcp.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked, see netns.Enter
		if err := netns.Enter(tp.srvNS); err != nil {
			done <- err
			return
		}
		done <- srv.ListenAndServe(tp.srvIf)
	}()
	var exitErr error
	return &dhcpInstance{
		cpu: func() time.Duration { d, _ := cpuTime(os.Getpid()); return d },
		failed: func() error {
			select {
			case exitErr = <-done:
				if exitErr == nil {
					exitErr = errors.New("ListenAndServe returned")
				}
				done = nil
			default:
			}
			return exitErr
		},
		stop: func() {
			srv.Close()
			if done != nil {
				select {
				case <-done:
				case <-time.After(5 * time.Second):
				}
			}
			if closeStore != nil {
				closeStore()
			}
		},
	}, nil
}

// childInstance wraps a server program for the DHCP runner.
func childInstance(c *child) *dhcpInstance {
	return &dhcpInstance{
		cpu: func() time.Duration { d, _ := cpuTime(c.pid()); return d },
		failed: func() error {
			if c.exited() {
				return fmt.Errorf("%s exited: %s", c.name, c.output())
			}
			return nil
		},
		stop: c.stop,
	}
}

// startKea runs kea-dhcp4 with a memfile lease database. persist=true so
// that, like Anvil's file store and dnsmasq, it writes every lease to
// disk (Kea appends to its CSV without fsync). It is bound to one
// address of the interface: with both, Kea opens two raw sockets and
// handles every broadcast twice. Logging is at WARN: at INFO Kea logs a
// line per lease, which neither Anvil nor dnsmasq (--quiet-dhcp) does.
func startKea(tp *nbTopo, dir string) (*dhcpInstance, error) {
	conf := filepath.Join(dir, "kea-dhcp4.json")
	cfg := fmt.Sprintf(`{"Dhcp4": {
 "interfaces-config": {"interfaces": ["%s/%s"]},
 "lease-database": {"type": "memfile", "persist": true, "name": "%s", "lfc-interval": 0},
 "valid-lifetime": %d,
 "subnet4": [{"id": 1, "subnet": "198.18.0.0/15", "pools": [{"pool": "%s - %s"}],
   "option-data": [{"name": "routers", "data": "198.18.0.1"}]}],
 "loggers": [{"name": "kea-dhcp4", "output_options": [{"output": "%s"}], "severity": "WARN"}]
}}`, tp.srvIf, nbServerIP, filepath.Join(dir, "kea-leases4.csv"), nbLeaseSecs, nbPoolStart, nbPoolEnd, filepath.Join(dir, "kea.log"))
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	// Kea's lock and pid files default to /run/kea: keep them in dir.
	env := []string{"KEA_LOCKFILE_DIR=" + dir, "KEA_PIDFILE_DIR=" + dir}
	c, err := startChild("kea-dhcp4", tp.srvNS, env, "kea-dhcp4", "-c", conf)
	if err != nil {
		return nil, err
	}
	return childInstance(c), nil
}

// startDnsmasq runs dnsmasq as a DHCP server only (--port=0). --no-ping:
// by default dnsmasq pings each address before offering it, which
// neither Anvil nor Kea does; --quiet-dhcp: no log line per packet;
// --dhcp-lease-max: the default of 1000 would refuse the run's clients.
func startDnsmasq(tp *nbTopo, dir string) (*dhcpInstance, error) {
	c, err := startChild("dnsmasq", tp.srvNS, nil, "dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--port=0",
		"--interface="+tp.srvIf, "--bind-interfaces",
		fmt.Sprintf("--dhcp-range=%s,%s,255.254.0.0,%d", nbPoolStart, nbPoolEnd, nbLeaseSecs),
		"--dhcp-leasefile="+filepath.Join(dir, "dnsmasq.leases"), "--dhcp-lease-max=1000000",
		"--dhcp-authoritative", "--no-ping", "--quiet-dhcp", "--user=root", "--group=root", "--pid-file=")
	if err != nil {
		return nil, err
	}
	return childInstance(c), nil
}

// dhcpProbe relays DISCOVERs from the client end, as perfdhcp will, until
// one is answered: the server is up. Its socket is closed before perfdhcp
// binds the same address.
func dhcpProbe(ctx context.Context, tp *nbTopo, inst *dhcpInstance) error {
	giaddr := net.ParseIP(nbClientIP).To4()
	conn, err := netns.Call(tp.cliNS, func() (*net.UDPConn, error) {
		return server4.NewIPv4UDPConn(tp.cliIf, &net.UDPAddr{IP: giaddr, Port: dhcpv4.ServerPort})
	})
	if err != nil {
		return err
	}
	defer conn.Close()
	mac := net.HardwareAddr{0x02, 0, 0, 0, 0, 0x01} // not one of perfdhcp's
	dst := &net.UDPAddr{IP: net.IPv4bcast, Port: dhcpv4.ServerPort}
	buf := make([]byte, 1500)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if err := inst.failed(); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		req, err := dhcpv4.NewDiscovery(mac, dhcpv4.WithGatewayIP(giaddr))
		if err != nil {
			return err
		}
		if _, err := conn.WriteTo(req.ToBytes(), dst); err != nil {
			return err
		}
		conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		for {
			n, _, err := conn.ReadFrom(buf)
			if err != nil {
				break // timed out: send again
			}
			if resp, err := dhcpv4.FromBytes(buf[:n]); err == nil && resp.TransactionID == req.TransactionID &&
				resp.MessageType() == dhcpv4.MessageTypeOffer {
				return nil
			}
		}
	}
	return errors.New("no OFFER to a probe in 15 s")
}
