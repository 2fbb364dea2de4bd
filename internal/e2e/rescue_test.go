package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/anvilmetal/anvil/internal/lab/ipmisim"
)

func newSSHKey(t interface{ Fatal(...any) }) ssh.Signer {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

var (
	leaseRE  = regexp.MustCompile(`dhcp iface=\S+ mac=\S+ ip=([0-9.]+)/`)
	rescueRE = regexp.MustCompile(`rescue ssh listening on \S+ host_key=\S+ (SHA256:\S+)`)
)

// rescueAddress reads, from the serial console, the address the rescue
// environment leased and the host key fingerprint it printed (the last
// boot's).
func rescueAddress(serial string) (addr, fingerprint string) {
	i := strings.LastIndex(serial, "rescue ssh listening on")
	if i < 0 {
		return "", ""
	}
	m := rescueRE.FindStringSubmatch(serial[i:])
	ls := leaseRE.FindAllStringSubmatch(serial[:i], -1)
	if m == nil || len(ls) == 0 {
		return "", ""
	}
	return ls[len(ls)-1][1], m[1]
}

// sshIn dials the machine's rescue SSH server from inside the namespace.
func (s *site) sshIn(addr string, key ssh.Signer, hostKey ssh.HostKeyCallback) (*ssh.Client, error) {
	var c net.Conn
	err := s.ns.Do(func() (err error) {
		c, err = (&net.Dialer{Timeout: 10 * time.Second}).DialContext(context.Background(), "tcp", net.JoinHostPort(addr, "22"))
		return err
	})
	if err != nil {
		return nil, err
	}
	cc, chans, reqs, err := ssh.NewClientConn(c, addr+":22", &ssh.ClientConfig{User: "root",
		Auth: []ssh.AuthMethod{ssh.PublicKeys(key)}, HostKeyCallback: hostKey, Timeout: 30 * time.Second})
	if err != nil {
		c.Close()
		return nil, err
	}
	return ssh.NewClient(cc, chans, reqs), nil
}

// rescueRoundTrip takes a deployed machine into rescue mode, logs in with
// the owner's key (a stranger's is refused), reads the disk's first
// sector there and compares it with the disk file, then exits: the
// machine is Deployed again and boots its disk (marker shows once more).
func (s *site) rescueRoundTrip(id string, b *ipmisim.BMC, disk, marker string) {
	t := s.t
	t.Helper()
	owner, stranger := newSSHKey(t), newSSHKey(t)
	s.api("POST", "account/prefs/sshkeys/", url.Values{"key": {string(ssh.MarshalAuthorizedKey(owner.PublicKey()))}}, nil)

	t0 := time.Now()
	var m apiMachine
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"rescue_mode"}}, &m)
	if m.StatusName != "Entering rescue mode" {
		t.Fatalf("op=rescue_mode answered status %q", m.StatusName)
	}
	s.waitStatus(id, "Rescue mode", 6*time.Minute, b)
	t.Logf("op=rescue_mode to RESCUE_MODE: %.1f s", time.Since(t0).Seconds())
	serial, _ := os.ReadFile(b.Serial())
	addr, fp := rescueAddress(string(serial))
	if addr == "" {
		t.Fatalf("no rescue SSH line on the console:\n%s", tail(serial, 4000))
	}
	// The timeline shows the fingerprint the console printed.
	if evs := s.events(id); !strings.Contains(evs, fp) {
		t.Fatalf("the timeline does not show host key %s:\n%s", fp, evs)
	}
	checkHost := func(_ string, _ net.Addr, k ssh.PublicKey) error {
		if got := ssh.FingerprintSHA256(k); got != fp {
			t.Errorf("host key %s, the timeline says %s", got, fp)
		}
		return nil
	}
	if c, err := s.sshIn(addr, stranger, checkHost); err == nil {
		c.Close()
		t.Fatal("rescue mode let in a key that is not the owner's")
	}
	c, err := s.sshIn(addr, owner, checkHost)
	if err != nil {
		t.Fatalf("ssh in with the owner's key: %v", err)
	}
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.CombinedOutput("dd if=/dev/vda bs=512 count=1 2>/dev/null | md5sum")
	c.Close()
	if err != nil {
		t.Fatalf("read the disk in rescue mode: %v: %s", err, out)
	}
	f, err := os.Open(disk)
	if err != nil {
		t.Fatal(err)
	}
	sector := make([]byte, 512)
	_, err = io.ReadFull(f, sector)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(sector)
	if want := hex.EncodeToString(sum[:]); !strings.HasPrefix(string(out), want) {
		t.Fatalf("the disk's first sector reads %q in rescue mode; the disk file's md5 is %s", out, want)
	}

	booted := countIn(b.Serial(), marker)
	t0 = time.Now()
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"exit_rescue_mode"}}, &m)
	if m.StatusName != "Exiting rescue mode" {
		t.Fatalf("op=exit_rescue_mode answered status %q", m.StatusName)
	}
	s.waitStatus(id, "Deployed", 6*time.Minute, b)
	s.waitSerial(b, "the deployed OS to boot again after rescue mode", 3*time.Minute, func(out string) bool { return strings.Count(out, marker) > booted })
	t.Logf("op=exit_rescue_mode to the deployed OS: %.1f s", time.Since(t0).Seconds())
}
