package tftpd

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/anvilmetal/anvil/internal/boot"
)

// small are the files every client fetches: the block edges.
var small = []string{"empty", "b511", "b512", "b513", "b1468", "b2936", "pxelinux.cfg/default"}

// tftp-hpa's client sends no options: plain RFC 1350, 512-byte blocks.
func TestTFTPHPA(t *testing.T) {
	need(t, "tftp")
	port, events := serve(t, Options{})
	dir := t.TempDir()
	for _, name := range append(small, "big") {
		out := filepath.Join(dir, strings.ReplaceAll(name, "/", "_"))
		if o, err := run(t, "tftp", "-m", "binary", "127.0.0.1", strconv.Itoa(port), "-c", "get", name, out); err != nil || o != "" {
			t.Fatalf("get %s: %v %s", name, err, o)
		}
		checkFile(t, out, name)
	}
	evs := events()
	if last := evs[len(evs)-1]; last.name != "big" || last.n != 64<<20 || last.err != nil {
		t.Errorf("observer heard %+v", last)
	}

	o, _ := run(t, "tftp", "-m", "binary", "127.0.0.1", strconv.Itoa(port), "-c", "get", "nothing", filepath.Join(dir, "x"))
	if !strings.Contains(o, "Error code 1: File not found") {
		t.Errorf("missing file: %q", o)
	}
	for _, name := range []string{"../secret", `..\secret`, "escape", "a/../../secret"} {
		o, _ := run(t, "tftp", "-m", "binary", "127.0.0.1", strconv.Itoa(port), "-c", "get", name, filepath.Join(dir, "x"))
		if !strings.Contains(o, "Error code 2: Access violation") {
			t.Errorf("get %s: %q", name, o)
		}
	}
	// Rooted names are names in the tree, as tftpd-hpa -s has them.
	o, _ = run(t, "tftp", "-m", "binary", "127.0.0.1", strconv.Itoa(port), "-c", "get", "/etc/passwd", filepath.Join(dir, "x"))
	if !strings.Contains(o, "Error code 1: File not found") {
		t.Errorf("get /etc/passwd: %q", o)
	}
	out := filepath.Join(dir, "rooted")
	if o, err := run(t, "tftp", "-m", "binary", "127.0.0.1", strconv.Itoa(port), "-c", "get", `\pxelinux.cfg\default`, out); err != nil || o != "" {
		t.Fatalf("get with backslashes: %v %s", err, o)
	}
	checkFile(t, out, "pxelinux.cfg/default")

	o, _ = run(t, "tftp", "-m", "binary", "127.0.0.1", strconv.Itoa(port), "-c", "put", filepath.Join(root(t), "b511"), "upload")
	if !strings.Contains(o, "Error code 2: Access violation") {
		t.Errorf("put: %q", o)
	}
	evs = events()
	if last := evs[len(evs)-1]; last.name != "upload" || !errors.Is(last.err, errWrite) {
		t.Errorf("observer heard %+v of the put", last)
	}
}

// atftp asks for blksize, tsize and windowsize; its trace shows the OACK,
// which agrees to the first two and leaves windowsize out.
func TestATFTP(t *testing.T) {
	need(t, "atftp")
	port, _ := serve(t, Options{})
	dir := t.TempDir()
	for _, blksize := range []int{512, 1468, 65464} {
		for _, name := range append(small, "mid") {
			out := filepath.Join(dir, strings.ReplaceAll(name, "/", "_"))
			o, err := run(t, "atftp", "--trace", "--option", fmt.Sprint("blksize ", blksize), "--option", "tsize 0",
				"--option", "windowsize 8", "-g", "-r", name, "-l", out, "127.0.0.1", strconv.Itoa(port))
			if err != nil {
				t.Fatalf("blksize %d, get %s: %v\n%s", blksize, name, err, o)
			}
			checkFile(t, out, name)
			// The OACK's options come in the library's map order.
			oack := oackLine(o)
			want := []string{fmt.Sprintf("blksize: %d,", blksize), fmt.Sprintf("tsize: %d,", sizes[name])}
			if name == "empty" {
				// The library cannot tell a tsize of 0 from the
				// client's question, so it leaves it out.
				want = want[:1]
			}
			for _, w := range want {
				if !strings.Contains(oack, w) || strings.Contains(oack, "windowsize") {
					t.Fatalf("blksize %d, get %s: want %s in OACK\n%s", blksize, name, w, firstLines(o))
				}
			}
		}
	}
	o, err := run(t, "atftp", "-g", "-r", "nothing", "-l", filepath.Join(dir, "x"), "127.0.0.1", strconv.Itoa(port))
	if err == nil || !strings.Contains(o, "File not found") {
		t.Errorf("missing file: %v %q", err, o)
	}
	o, err = run(t, "atftp", "-p", "-r", "upload", "-l", filepath.Join(root(t), "b511"), "127.0.0.1", strconv.Itoa(port))
	if err == nil || !strings.Contains(o, "Access violation") {
		t.Errorf("put: %v %q", err, o)
	}
}

func oackLine(trace string) string {
	for _, l := range strings.Split(trace, "\n") {
		if strings.HasPrefix(l, "received OACK") {
			return l
		}
	}
	return ""
}

func firstLines(s string) string {
	if l := strings.SplitN(s, "\n", 12); len(l) == 12 {
		return strings.Join(l[:11], "\n") + "\n..."
	}
	return s
}

// curl asks for tsize and the blksize given; its exit status tells the
// TFTP error (68 not found, 69 access violation).
func TestCurl(t *testing.T) {
	need(t, "curl")
	port, _ := serve(t, Options{})
	dir := t.TempDir()
	url := fmt.Sprintf("tftp://127.0.0.1:%d/", port)
	for _, blksize := range []string{"512", "1468", "65464"} {
		for _, name := range append(small, "big") {
			if name == "big" && blksize == "512" {
				continue // tftp-hpa's test covers 512-byte blocks of it
			}
			out := filepath.Join(dir, "out")
			if o, err := run(t, "curl", "-sS", "--tftp-blksize", blksize, "-o", out, url+name); err != nil {
				t.Fatalf("blksize %s, get %s: %v %s", blksize, name, err, o)
			}
			checkFile(t, out, name)
		}
	}
	for name, want := range map[string]string{"nothing": "exit status 68", "..%2fsecret": "exit status 69", "escape": "exit status 69"} {
		o, err := run(t, "curl", "-sS", "-o", filepath.Join(dir, "x"), url+name)
		if err == nil || err.Error() != want {
			t.Errorf("get %s: %v (want %s) %s", name, err, want, o)
		}
	}
}

// Twenty clients at once, each checking what it got.
func TestConcurrent(t *testing.T) {
	need(t, "curl")
	port, events := serve(t, Options{})
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			out := filepath.Join(dir, strconv.Itoa(i))
			o, err := run(t, "curl", "-sS", "--tftp-blksize", "1468", "-o", out, fmt.Sprintf("tftp://127.0.0.1:%d/mid", port))
			if err != nil {
				t.Errorf("client %d: %v %s", i, err, o)
			}
		})
	}
	wg.Wait()
	for i := range 20 {
		checkFile(t, filepath.Join(dir, strconv.Itoa(i)), "mid")
	}
	if evs := events(); len(evs) != 20 {
		t.Errorf("observer heard %d transfers", len(evs))
	}
}

// Over IPv6 the library takes another path (its ipv6 control messages).
func TestIPv6(t *testing.T) {
	need(t, "curl")
	conn, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	s := New(boot.Dir(root(t)), Options{})
	go s.Serve(conn)
	defer s.Shutdown()
	out := filepath.Join(t.TempDir(), "out")
	url := fmt.Sprintf("tftp://[::1]:%d/mid", conn.LocalAddr().(*net.UDPAddr).Port)
	if o, err := run(t, "curl", "-sS", "--tftp-blksize", "1468", "-o", out, url); err != nil {
		t.Fatalf("%v %s", err, o)
	}
	checkFile(t, out, "mid")
}
