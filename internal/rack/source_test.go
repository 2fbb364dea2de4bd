package rack_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/boot"
	"github.com/anvilmetal/anvil/internal/boot/httpboot"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/rack"
)

func fleetCache(n int) *rack.Cache {
	c := rack.NewCache("")
	c.Apply(rack.Change{Reset: true})
	for i := 0; i < n; i++ {
		st := machine.Deploying
		if i%2 == 0 {
			st = machine.Deployed
		}
		e := rack.Entry{SystemID: fmt.Sprintf("s%05d", i), Hostname: fmt.Sprintf("node%d", i), Arch: "amd64/generic",
			Status: st, Purpose: machine.PurposeOf(st), MACs: []string{mac(i)}}
		c.Apply(rack.Change{Upsert: &e})
	}
	c.Apply(rack.Change{Synced: true})
	return c
}

func mac(i int) string {
	return fmt.Sprintf("52:54:01:%02x:%02x:%02x", byte(i>>16), byte(i>>8), byte(i))
}

func newSource(t testing.TB, c *rack.Cache, rep *rack.Reporter) *rack.BootSource {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lpxelinux.0"), []byte("loader"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &rack.BootSource{Cache: c, Files: boot.Dir(dir), Report: rep, HTTPBase: "http://192.0.2.1:5248",
		MetadataURL: "http://192.0.2.1:5240/MAAS/metadata/", Kernel: "ephemeral/vmlinuz", Initrd: "ephemeral/initrd.img",
		ExtraParams: []string{"console=ttyS0,115200"}}
}

func read(t testing.TB, s *rack.BootSource, name string) (string, error) {
	f, err := s.Open(context.Background(), name, boot.Client{Proto: "tftp"})
	if err != nil {
		return "", err
	}
	b, _ := io.ReadAll(f)
	return string(b), nil
}

func TestBootSourceAnswers(t *testing.T) {
	rep := rack.NewReporter(100)
	s := newSource(t, fleetCache(4), rep)
	cases := []struct {
		name string
		want []string
		err  error
	}{
		{"ipxe.cfg-" + mac(1), []string{"#!ipxe", "http://192.0.2.1:5248/ephemeral/vmlinuz", "anvil.purpose=install"}, nil},
		{"ipxe.cfg-" + mac(0), []string{"#!ipxe", "exit"}, nil}, // deployed: local disk
		{"pxelinux.cfg/01-" + strings.ReplaceAll(mac(2), ":", "-"), []string{"LOCALBOOT 0"}, nil},
		{"grub/grub.cfg-" + mac(3), []string{"anvil.purpose=install"}, nil},
		{"ipxe.cfg-52:54:00:de:ad:01", nil, boot.ErrNotFound},
		{"pxelinux.cfg/01-52-54-00-de-ad-01", nil, boot.ErrNotFound},
		{"ipxe.cfg-default-amd64", []string{"anvil.purpose=enlist", "anvil.url=http://192.0.2.1:5240/MAAS/metadata/"}, nil},
		{"pxelinux.cfg/default", []string{"anvil.purpose=enlist"}, nil},
		{"grub/grub.cfg", []string{"net_default_mac"}, nil},
		{"ipxe.cfg", []string{"#!ipxe", "chain --autofree --replace http://192.0.2.1:5248/ipxe.cfg-${mac} ||\n", "--replace http://192.0.2.1:5248/ipxe.cfg-default-amd64", "\nexit 1\n"}, nil},
		{"lpxelinux.0", []string{"loader"}, nil},
		{"missing.efi", nil, boot.ErrNotFound},
		{"../etc/passwd", nil, boot.ErrBadName},
	}
	for _, c := range cases {
		got, err := read(t, s, c.name)
		if !errors.Is(err, c.err) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: answer lacks %q:\n%s", c.name, w, got)
			}
		}
	}
	if rep.Pending() == 0 {
		t.Fatal("no boot events reported")
	}
}

// BenchmarkPerMACAnswer: the rack's per-MAC config answer with 10,000
// known machines, rendering included (go test -bench PerMAC ./internal/rack/).
func BenchmarkPerMACAnswer(b *testing.B) {
	s := newSource(b, fleetCache(10000), nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := read(b, s, "ipxe.cfg-"+mac(i%10000)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPerMACOverHTTPLatency reports (it does not judge) the p99 of per-MAC
// answers over the boot HTTP server with 10,000 machines and no region.
func TestPerMACOverHTTPLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	s := newSource(t, fleetCache(10000), nil)
	srv := httptest.NewServer(httpboot.Handler(s, nil))
	defer srv.Close()
	var d []time.Duration
	for i := 0; i < 2000; i++ {
		t0 := time.Now()
		resp, err := http.Get(srv.URL + "/ipxe.cfg-" + mac(i*7%10000))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		d = append(d, time.Since(t0))
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	t.Logf("per-MAC answer over HTTP, 10,000 machines, region absent: p50 %v p99 %v", d[len(d)/2], d[len(d)*99/100])
}
