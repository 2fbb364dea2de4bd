package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/anvilmetal/anvil/internal/boot"
	"github.com/anvilmetal/anvil/internal/boot/httpboot"
	"github.com/anvilmetal/anvil/internal/boot/tftpd"
	"github.com/anvilmetal/anvil/internal/netns"
)

// Ports in the server namespace. Both servers of a protocol run at once
// so that runs can alternate between them.
const (
	anvilTFTPPort = 69
	hpaTFTPPort   = 6969
	anvilHTTPPort = 5248 // MAAS's boot HTTP port
	nginxHTTPPort = 8080
)

// startAnvilTFTP serves www with Anvil's TFTP server in this process.
// Serve runs on a thread locked into the server namespace because the
// library opens each transfer's socket from the Serve loop: that socket
// must be made in the namespace too.
func startAnvilTFTP(tp *nbTopo, www string) (func(), error) {
	srv := tftpd.New(boot.Dir(www), tftpd.Options{})
	ready := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked, see netns.Enter
		if err := netns.Enter(tp.srvNS); err != nil {
			ready <- err
			return
		}
		conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(nbServerIP), Port: anvilTFTPPort})
		ready <- err
		if err == nil {
			_ = srv.Serve(conn)
		}
	}()
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("anvil tftp: %w", err)
	}
	return func() {
		srv.Shutdown()
		<-done
	}, nil
}

// startHPA runs tftpd-hpa in the foreground, chrooted into www.
func startHPA(ctx context.Context, tp *nbTopo, www string) (*child, error) {
	c, err := startChild("in.tftpd", tp.srvNS, nil, "in.tftpd", "--foreground",
		"--address", net.JoinHostPort(nbServerIP, strconv.Itoa(hpaTFTPPort)), "--secure", www)
	if err != nil {
		return nil, err
	}
	// UDP has no connect to wait for: fetch the small file until it works.
	url := fmt.Sprintf("tftp://%s:%d/%s", nbServerIP, hpaTFTPPort, smallFile)
	for range 50 {
		if c.exited() {
			return nil, fmt.Errorf("in.tftpd exited: %s", c.output())
		}
		if nsCmd(ctx, tp.cliNS, "curl", "-sS", "--max-time", "1", "-o", "/dev/null", url).Run() == nil {
			return c, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.stop()
	return nil, fmt.Errorf("in.tftpd not answering: %s", c.output())
}

// startAnvilHTTP serves www with Anvil's httpboot handler, configured as
// the rack configures it. Accepted connections belong to the listener's
// namespace, so only the listen needs the locked thread.
func startAnvilHTTP(tp *nbTopo, www string) (func(), error) {
	ln, err := netns.Call(tp.srvNS, func() (net.Listener, error) {
		return net.Listen("tcp", net.JoinHostPort(nbServerIP, strconv.Itoa(anvilHTTPPort)))
	})
	if err != nil {
		return nil, fmt.Errorf("anvil http: %w", err)
	}
	hs := &http.Server{Handler: httpboot.Handler(boot.Dir(www), nil), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return func() { _ = hs.Close() }, nil
}

// nginxConf is the minimal static-file server: one worker, sendfile, no
// access log (Anvil's handler logs nothing per request either), and
// keep-alive not cut at nginx's default 1000 requests (Go's server has
// no such limit). Every path nginx would write is under the prefix.
const nginxConf = `worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    default_type application/octet-stream;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    server {
        listen %[2]s:%[3]d;
        root %[4]s;
    }
}
`

func startNginx(ctx context.Context, tp *nbTopo, dir, www string) (*child, error) {
	prefix := filepath.Join(dir, "nginx")
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return nil, err
	}
	conf := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, prefix, nbServerIP, nginxHTTPPort, www), 0o644); err != nil {
		return nil, err
	}
	c, err := startChild("nginx", tp.srvNS, nil, "nginx", "-c", conf, "-p", prefix, "-e", filepath.Join(prefix, "error.log"),
		"-g", "daemon off;")
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(nbServerIP, strconv.Itoa(nginxHTTPPort))
	for range 100 {
		if c.exited() {
			return nil, fmt.Errorf("nginx exited: %s", c.output())
		}
		conn, err := netns.Call(tp.srvNS, func() (net.Conn, error) { return net.DialTimeout("tcp", addr, time.Second) })
		if err == nil {
			conn.Close()
			return c, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.stop()
	return nil, fmt.Errorf("nginx not listening: %s", c.output())
}
