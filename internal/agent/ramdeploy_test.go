package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

func testTgz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, d := range []string{"./", "./sbin/", "./etc/"} {
		tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755})
	}
	for name, data := range files {
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(data))})
		tw.Write([]byte(data))
	}
	tw.Close()
	zw.Close()
	return b.Bytes()
}

// A deployment to memory unpacks the tarball into the memory root, writes
// the seed there, reports OK and switches root to the image's init; the
// disk is not touched.
func TestDeployToMemory(t *testing.T) {
	needRoot(t) // the unpack keeps owners
	img := testTgz(t, map[string]string{"./sbin/init": "#!/bin/sh\n", "./etc/hostname": "img\n"})
	srv := httptest.NewServer(&imageServer{data: img})
	defer srv.Close()
	blockDir, devDir := testDisks(t, 0xab, map[string]int64{"vda": 64 * MiB})
	root := t.TempDir()
	var switched []string
	task := agentapi.Task{Phase: agentapi.PhaseDeploying, Ephemeral: true, Hostname: "ram-1", InstanceID: "abc123",
		UserData: []byte("#cloud-config\n# s3cret-user-data\n"), SSHKeys: []string{"ssh-ed25519 AAAA owner"},
		Image: &agentapi.Image{URL: srv.URL + "/image", SHA256: sha(img), Size: int64(len(img)), FileType: FileTypeTgz}}
	reg, _, _ := runPhase(t, agentapi.PhaseDeploying, task, blockDir, devDir, func(a *Agent) {
		a.MemoryRoot = root
		a.SwitchRoot = func(r, init string) error { switched = append(switched, r, init); return nil }
	})
	if s := lastSignal(reg); s.Status != agentapi.StatusOK || !strings.Contains(s.Error, "running from memory") {
		t.Fatalf("last signal %+v", s)
	}
	if len(switched) != 2 || switched[0] != root || switched[1] != "/sbin/init" {
		t.Fatalf("switch root %v", switched)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "etc/hostname")); string(b) != "img\n" {
		t.Errorf("etc/hostname %q", b)
	}
	md, err := os.ReadFile(filepath.Join(root, "var/lib/cloud/seed/nocloud/meta-data"))
	if err != nil || !strings.Contains(string(md), `local-hostname: "ram-1"`) || !strings.Contains(string(md), "owner") {
		t.Errorf("meta-data %q %v", md, err)
	}
	if ud, _ := os.ReadFile(filepath.Join(root, "var/lib/cloud/seed/nocloud/user-data")); !bytes.Equal(ud, task.UserData) {
		t.Errorf("user-data %q", ud)
	}
	if fi, err := os.Stat(filepath.Join(root, "var/lib/cloud/seed/nocloud/user-data")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("user-data mode %v %v", fi.Mode(), err)
	}
	checkUntouched(t, filepath.Join(devDir, "vda"), 0xab)
}

func checkUntouched(t *testing.T, disk string, fill byte) {
	t.Helper()
	b, err := os.ReadFile(disk)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte{fill}); n != len(b) {
		t.Errorf("the disk has %d bytes changed", len(b)-n)
	}
}

// What cannot run from memory fails before anything is unpacked or
// reported as deployed: a raw disk image, an image without an init.
func TestDeployToMemoryRefusals(t *testing.T) {
	needRoot(t)
	raw := testImage(2 * MiB)
	noInit := testTgz(t, map[string]string{"./etc/hostname": "img\n"})
	for _, c := range []struct {
		name, fileType, want string
		data                 []byte
	}{
		{"raw", FileTypeRaw, "needs a root filesystem tarball", raw},
		{"no init", FileTypeTgz, "no init to boot", noInit},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(&imageServer{data: c.data})
			defer srv.Close()
			blockDir, devDir := testDisks(t, 0xab, map[string]int64{"vda": 64 * MiB})
			task := agentapi.Task{Phase: agentapi.PhaseDeploying, Ephemeral: true, Hostname: "h", InstanceID: "i",
				Image: &agentapi.Image{URL: srv.URL + "/image", SHA256: sha(c.data), Size: int64(len(c.data)), FileType: c.fileType}}
			switched := false
			reg, power, _ := runPhase(t, agentapi.PhaseDeploying, task, blockDir, devDir, func(a *Agent) {
				a.MemoryRoot = t.TempDir()
				a.SwitchRoot = func(string, string) error { switched = true; return nil }
			})
			if s := lastSignal(reg); s.Status != agentapi.StatusFailed || !strings.Contains(s.Error, c.want) {
				t.Fatalf("last signal %+v", s)
			}
			if switched || len(power.get()) != 1 || power.get()[0] != "poweroff" {
				t.Errorf("switched=%v power %v", switched, power.get())
			}
			checkUntouched(t, filepath.Join(devDir, "vda"), 0xab)
		})
	}
}
