package tftpd

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/boot"
)

// tree is one boot tree for the whole test binary: the 64 MiB file takes a
// moment to write and is read only.
var tree struct {
	once sync.Once
	dir  string // parent; the served root is dir/root
	sums map[string]string
}

// files of the tree, by name and size: the block edges of 512-byte and
// 1468-byte transfers, and one big enough to wrap the 16-bit block number.
var sizes = map[string]int{
	"empty": 0, "b511": 511, "b512": 512, "b513": 513,
	"b1468": 1468, "b2936": 2936, "mid": 4 << 20, "big": 64 << 20,
	"pxelinux.cfg/default": 300,
}

func TestMain(m *testing.M) {
	code := m.Run()
	if tree.dir != "" {
		os.RemoveAll(tree.dir)
	}
	os.Exit(code)
}

// root returns the served directory, writing it on first use. Beside it,
// outside the root, lies "secret", and root/escape is a symlink to it.
func root(t testing.TB) string {
	tree.once.Do(func() {
		dir, err := os.MkdirTemp("", "anvil-tftpd-")
		if err != nil {
			panic(err)
		}
		tree.dir, tree.sums = dir, map[string]string{}
		r := rand.New(rand.NewChaCha8([32]byte{'a', 'n', 'v', 'i', 'l'}))
		for name, size := range sizes {
			b := make([]byte, size)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			p := filepath.Join(dir, "root", name)
			must(os.MkdirAll(filepath.Dir(p), 0o755))
			must(os.WriteFile(p, b, 0o644))
			sum := sha256.Sum256(b)
			tree.sums[name] = hex.EncodeToString(sum[:])
		}
		must(os.WriteFile(filepath.Join(dir, "secret"), []byte("secret\n"), 0o644))
		must(os.Symlink("../secret", filepath.Join(dir, "root", "escape")))
	})
	if tree.sums == nil {
		t.Fatal("boot tree could not be written")
	}
	return filepath.Join(tree.dir, "root")
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// event is one call of the Observer.
type event struct {
	name string
	n    int64
	err  error
}

// serve starts a server on a free loopback port and returns that port and
// what the Observer heard so far.
func serve(t testing.TB, opts Options) (port int, events func() []event) {
	var mu sync.Mutex
	var evs []event
	opts.Observer = func(name string, c boot.Client, n int64, d time.Duration, err error) {
		if c.Proto != "tftp" || !c.Addr.Addr().IsLoopback() {
			t.Errorf("observer got client %+v", c)
		}
		mu.Lock()
		evs = append(evs, event{name, n, err})
		mu.Unlock()
	}
	s := New(boot.Dir(root(t)), opts)
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(conn) }()
	t.Cleanup(func() {
		s.Shutdown()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return conn.LocalAddr().(*net.UDPAddr).Port, func() []event {
		mu.Lock()
		defer mu.Unlock()
		return append([]event(nil), evs...)
	}
}

// need skips the test when a client binary is missing; scripts/test.sh
// installs them (tftp-hpa, atftp, curl).
func need(t *testing.T, bin string) {
	if _, err := exec.LookPath(bin); err != nil {
		t.Skipf("%s not installed (Debian: tftp-hpa, atftp, curl)", bin)
	}
}

// run runs a client with a deadline and returns its combined output.
func run(t *testing.T, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// checkFile fails unless path holds the tree's file name.
func checkFile(t *testing.T, path, name string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != tree.sums[name] {
		t.Fatalf("%s: got %d bytes, sha256 %s; want %d bytes", name, len(b), got, sizes[name])
	}
}

// request sends one raw request packet (opcode, name, mode "octet", then
// options as name/value pairs) and returns the first answer.
func request(t *testing.T, port int, op uint16, name string, opts ...string) []byte {
	t.Helper()
	p := binary.BigEndian.AppendUint16(nil, op)
	for _, s := range append([]string{name, "octet"}, opts...) {
		p = append(append(p, s...), 0)
	}
	return exchange(t, port, p)
}

// exchange sends a datagram and returns the first answer, or nil after a
// second of silence.
func exchange(t *testing.T, port int, p []byte) []byte {
	t.Helper()
	// Unconnected: the answer comes from a new port.
	lc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	if _, err := lc.WriteToUDP(p, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}); err != nil {
		t.Fatal(err)
	}
	lc.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 65536)
	n, _, err := lc.ReadFromUDP(buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

// send sends a datagram, expecting nothing back.
func send(t *testing.T, port int, p []byte) {
	t.Helper()
	conn, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(p) // a 70000-byte datagram is refused by the kernel: fine
}

// tftpError decodes an ERROR packet as "code N: message".
func tftpError(p []byte) string {
	if len(p) < 5 || binary.BigEndian.Uint16(p) != 5 {
		return fmt.Sprintf("not an error: %q", p)
	}
	return fmt.Sprintf("code %d: %s", binary.BigEndian.Uint16(p[2:]), strings.TrimRight(string(p[4:]), "\x00"))
}
