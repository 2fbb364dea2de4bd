package demo

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/netns"
)

// start makes the namespace with its bridge and tap, starts `anvil serve`
// inside it with DHCP on the bridge, and forwards cfg.Web to its API.
func (d *run) start(ctx context.Context) error {
	key, err := d.anvil("apikey", "--username", "admin", "--data", d.data)
	if err != nil {
		return err
	}
	d.key = key
	if err := d.webPassword(); err != nil {
		return err
	}
	ns := d.cfg.Netns
	if err := netns.Add(ns); err != nil {
		return err
	}
	d.onCleanup(func() {
		if err := netns.Delete(ns); err != nil {
			d.say("%v", err)
			return
		}
		d.say("removed network namespace %s (bridge %s, %s)", ns, bridge, tap)
	})
	if err := netns.Bridge(ns, bridge, regionIP+prefixLen, tap); err != nil {
		return err
	}
	// No forwarding delay: the machine's firmware sends its DHCP discover
	// the moment its link is up.
	if err := netns.IP(ns, "link", "set", bridge, "type", "bridge", "forward_delay", "0"); err != nil {
		return err
	}
	if err := netns.IP(ns, "addr", "add", bmcIP+prefixLen, "dev", bridge); err != nil {
		return err
	}
	d.say("network namespace %s: bridge %s %s%s, tap %s", ns, bridge, regionIP, prefixLen, tap)

	if err := d.serve(); err != nil {
		return err
	}
	if err := d.forward(); err != nil {
		return err
	}
	cl, err := d.client()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := cl.Version(ctx); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("anvil serve does not answer at %s after 30 s (log: %s): %w", d.web, d.path("serve.log"), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// serve starts `anvil serve` in the namespace: region, rack and DHCP on
// the bridge; machines that enlist go on to commissioning.
func (d *run) serve() error {
	log, err := os.Create(d.path("serve.log"))
	if err != nil {
		return err
	}
	args := []string{"netns", "exec", d.cfg.Netns, d.cfg.Anvil, "serve", "--data", d.data,
		"--listen", regionIP + ":5240",
		"--tftp-listen", regionIP + ":69", "--boot-http-listen", regionIP + ":5248",
		"--boot-http-url", "http://" + regionIP + ":5248",
		"--dhcp-interface", bridge, "--enlist-commission"}
	cmd := exec.Command("ip", args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, stopped by its id; Pdeathsig: it goes with
	// this process should cleanup never run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	done, err := lab.StartTied(cmd, func() { log.Close() })
	if err != nil {
		log.Close()
		return fmt.Errorf("start anvil serve: %w", err)
	}
	pid := cmd.Process.Pid
	d.say("anvil serve running (pid %d), log %s", pid, log.Name())
	d.onCleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-done
		}
		d.say("stopped anvil serve (pid %d)", pid)
	})
	return nil
}

// listenWeb takes cfg.Web before anything is built, so that a port in
// use is said at once.
func (d *run) listenWeb() error {
	ln, err := net.Listen("tcp", d.cfg.Web)
	if err != nil {
		return fmt.Errorf("web address (--web): %w", err)
	}
	d.webListener = ln
	d.web = "http://" + ln.Addr().String() + "/MAAS/"
	d.onCleanup(func() { ln.Close() })
	return nil
}

// forward, on the listener of listenWeb outside the namespace, relays each
// connection to the region's API inside it, so a browser and the CLI on
// this host reach the demo.
func (d *run) forward() error {
	ln := d.webListener
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	track := func(c net.Conn, on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			conns[c] = true
		} else {
			delete(conns, c)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				track(c, true)
				defer track(c, false)
				relay(d.cfg.Netns, c)
			}()
		}
	}()
	d.onCleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return nil
}

// relay copies between c and a connection to the region made inside the
// namespace, until either side closes.
func relay(ns string, c net.Conn) {
	defer c.Close()
	up, err := netns.Call(ns, func() (net.Conn, error) {
		return net.DialTimeout("tcp", regionIP+":5240", 5*time.Second)
	})
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
}

// client is an API client of the region through the forwarded address.
func (d *run) client() (*client.Client, error) {
	return client.New(d.web, d.key)
}

// webPassword gives admin a random password for the web pages, kept in a
// file only root reads.
func (d *run) webPassword() error {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	file := d.path("admin-password")
	if err := os.WriteFile(file, []byte(base64.RawURLEncoding.EncodeToString(b)+"\n"), 0o600); err != nil {
		return err
	}
	_, err := d.anvil("passwd", "--username", "admin", "--data", d.data, "--password-file", file)
	return err
}

// checkNetns refuses a namespace that processes still run in (another
// demo's); one that is empty is what a killed run left, and Add replaces
// it.
func checkNetns(name string) error {
	if _, err := os.Stat(filepath.Join(netns.Dir, name)); err != nil {
		return nil
	}
	out, err := exec.Command("ip", "netns", "pids", name).Output()
	if err != nil {
		return fmt.Errorf("ip netns pids %s: %w", name, err)
	}
	if pids := strings.Fields(string(out)); len(pids) > 0 {
		return fmt.Errorf("network namespace %s is in use by pids %s (another lab demo?): stop it, or give this one a --netns of its own",
			name, strings.Join(pids, ", "))
	}
	return nil
}
