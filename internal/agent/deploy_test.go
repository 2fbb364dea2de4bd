package agent

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/ulikunitz/xz"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// testDisks makes a /sys/block and a /dev with regular files as disks,
// each filled with fill.
func testDisks(t *testing.T, fill byte, sizes map[string]int64) (blockDir, devDir string) {
	t.Helper()
	root := t.TempDir()
	blockDir, devDir = filepath.Join(root, "block"), filepath.Join(root, "dev")
	for name, size := range sizes {
		d := filepath.Join(blockDir, name)
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "size"), fmt.Appendf(nil, "%d\n", size/512), 0o644)
		os.WriteFile(filepath.Join(d, "removable"), []byte("0\n"), 0o644)
		os.WriteFile(filepath.Join(d, "ro"), []byte("0\n"), 0o644)
		os.MkdirAll(devDir, 0o755)
		if err := os.WriteFile(filepath.Join(devDir, name), bytes.Repeat([]byte{fill}, int(size)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return blockDir, devDir
}

// testImage is a raw disk image: an MBR with one Linux partition from
// 1 MiB to its end, random content.
func testImage(size int64) []byte {
	img := make([]byte, size)
	r := rand.New(rand.NewSource(1))
	for off := int64(512); off < size; off += 64 << 10 {
		r.Read(img[off:min(off+4096, size)])
	}
	mbr := img[:512]
	for i := 446; i < 512; i++ {
		mbr[i] = 0
	}
	e := mbr[446:462]
	e[4] = 0x83
	binary.LittleEndian.PutUint32(e[8:], 2048)
	binary.LittleEndian.PutUint32(e[12:], uint32(size/512-2048))
	mbr[510], mbr[511] = 0x55, 0xAA
	return img
}

type imageServer struct {
	data    []byte
	dropAt  int64 // the first full GET stops after that many bytes
	dropped atomic.Bool
}

func (s *imageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rg := r.Header.Get("Range")
	if rg == "" && s.dropAt > 0 && !s.dropped.Swap(true) {
		w.Header().Set("Content-Length", fmt.Sprint(len(s.data)))
		w.WriteHeader(200)
		w.Write(s.data[:s.dropAt])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	http.ServeContent(w, r, "image", time.Time{}, bytes.NewReader(s.data))
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// runPhase runs the agent through one phase against a fake region that
// answers the task.
func runPhase(t *testing.T, phase string, task agentapi.Task, blockDir, devDir string, tweak ...func(*Agent)) (*region, *fakePower, string) {
	t.Helper()
	reg := &region{t: t, answers: map[string][]answer{
		agentapi.HelloPath: {{resp: agentapi.HelloResponse{Action: agentapi.ActionProceed, Phase: phase, Token: "tok:en:secret"}}},
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/"+agentapi.TaskPath) {
			json.NewEncoder(w).Encode(task)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	var console bytes.Buffer
	power := &fakePower{}
	a := &Agent{
		Cmdline: Cmdline{URL: srv.URL + "/MAAS/metadata/", Purpose: PurposeEnlist, Heartbeat: 10 * time.Millisecond},
		Client:  &agentapi.Client{Base: srv.URL + "/MAAS/metadata/"},
		Sys:     fakeSystem{}, Power: power, Console: &syncWriter{w: &console},
		Backoff: time.Millisecond, RetryFor: 5 * time.Second, BMCResetWait: 20 * time.Millisecond,
		BlockDir: blockDir, DevDir: devDir,
	}
	for _, f := range tweak {
		f(a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a.Run(ctx)
	out := console.String()
	for _, secret := range []string{"tok:en:secret", "s3cret-user-data"} {
		if strings.Contains(out, secret) {
			t.Errorf("console shows a secret:\n%s", out)
		}
	}
	t.Logf("console:\n%s", out)
	return reg, power, out
}

func lastSignal(reg *region) signal {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return reg.signals[len(reg.signals)-1]
}

func compress(t *testing.T, kind string, b []byte) []byte {
	var buf bytes.Buffer
	switch kind {
	case FileTypeGz:
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
	case FileTypeXz:
		w, err := xz.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		w.Close()
	default:
		return b
	}
	return buf.Bytes()
}

func TestDeploy(t *testing.T) {
	raw := testImage(3 * MiB)
	for _, kind := range []string{FileTypeRaw, FileTypeGz, FileTypeXz} {
		t.Run(kind, func(t *testing.T) {
			body := compress(t, kind, raw)
			is := &imageServer{data: body, dropAt: int64(len(body) / 2)}
			img := httptest.NewServer(is)
			defer img.Close()
			blockDir, devDir := testDisks(t, 0xAA, map[string]int64{"vda": 16 * MiB, "sr0": 64 * MiB})
			task := agentapi.Task{
				Phase: agentapi.PhaseDeploying, Hostname: "node-1", InstanceID: "abc123",
				UserData: []byte("#cloud-config\npassword: s3cret-user-data\n"),
				SSHKeys:  []string{"ssh-ed25519 AAAA user@host"},
				Image:    &agentapi.Image{URL: img.URL + "/images/x", SHA256: sha(body), Size: int64(len(body)), FileType: kind},
				// The region reboots machines with a BMC itself: the agent
				// gives it the time before rebooting on its own.
				RebootByBMC: kind == FileTypeRaw,
			}
			reg, power, out := runPhase(t, agentapi.PhaseDeploying, task, blockDir, devDir)
			if s := lastSignal(reg); s.Status != agentapi.StatusInstalled {
				t.Fatalf("last signal %+v", s)
			}
			if got := power.get(); len(got) != 1 || got[0] != "reboot" {
				t.Fatalf("power %v", got)
			}
			if waited := strings.Contains(out, "reboot waiting up to"); waited != task.RebootByBMC {
				t.Errorf("waited for the BMC: %v, want %v", waited, task.RebootByBMC)
			}
			if !strings.Contains(out, "deploy wrote 3 MiB") || !strings.Contains(out, "download+write=") || !strings.Contains(out, "seed=") {
				t.Errorf("console lacks the progress or stage lines")
			}
			if !strings.Contains(out, fmt.Sprintf("raw_size=%d", len(raw))) {
				t.Errorf("raw size not found before writing")
			}
			if !strings.Contains(out, "resuming") {
				t.Errorf("the dropped download was not resumed")
			}
			disk, _ := os.ReadFile(filepath.Join(devDir, "vda"))
			if !bytes.Equal(disk[512:len(raw)], raw[512:]) || !bytes.Equal(disk[:446], raw[:446]) {
				t.Fatalf("image not on disk")
			}
			e := disk[446+16 : 446+32]
			start, count := binary.LittleEndian.Uint32(e[8:]), binary.LittleEndian.Uint32(e[12:])
			if e[4] != 0x0E || start != 8*MiB/512 || count != 8*MiB/512 {
				t.Fatalf("seed partition type %x start %d count %d", e[4], start, count)
			}
			fs := disk[int64(start)*512 : int64(start+count)*512]
			files := checkFAT(t, fs)
			want := map[string]string{
				"meta-data": "instance-id: \"abc123\"\nlocal-hostname: \"node-1\"\npublic-keys:\n  - \"ssh-ed25519 AAAA user@host\"\n",
				"user-data": string(task.UserData),
			}
			for name, w := range want {
				if files[name] != w {
					t.Errorf("%s = %q, want %q", name, files[name], w)
				}
			}
		})
	}
}

func TestDeployChecksumMismatchWipes(t *testing.T) {
	raw := testImage(3 * MiB)
	img := httptest.NewServer(&imageServer{data: raw})
	defer img.Close()
	blockDir, devDir := testDisks(t, 0xAA, map[string]int64{"vda": 16 * MiB})
	bad := strings.Repeat("0", 64)
	task := agentapi.Task{Image: &agentapi.Image{URL: img.URL, SHA256: bad, Size: int64(len(raw)), FileType: FileTypeRaw}}
	reg, power, _ := runPhase(t, agentapi.PhaseDeploying, task, blockDir, devDir)
	s := lastSignal(reg)
	if want := fmt.Sprintf("checksum mismatch: expected %s, got %s", bad, sha(raw)); s.Status != agentapi.StatusFailed || s.Error != want {
		t.Fatalf("last signal %+v", s)
	}
	if got := power.get(); len(got) != 1 || got[0] != "poweroff" {
		t.Fatalf("power %v", got)
	}
	disk, _ := os.ReadFile(filepath.Join(devDir, "vda"))
	if !bytes.Equal(disk[:MiB], make([]byte, MiB)) {
		t.Fatal("first MiB not wiped")
	}
}

func TestDeployDiskTooSmall(t *testing.T) {
	raw := testImage(3 * MiB)
	for _, kind := range []string{FileTypeRaw, FileTypeGz, FileTypeXz} {
		t.Run(kind, func(t *testing.T) {
			body := compress(t, kind, raw)
			is := &imageServer{data: body}
			img := httptest.NewServer(is)
			defer img.Close()
			blockDir, devDir := testDisks(t, 0xAA, map[string]int64{"vda": 2 * MiB})
			task := agentapi.Task{Image: &agentapi.Image{URL: img.URL, SHA256: sha(body), Size: int64(len(body)), FileType: kind}}
			reg, power, _ := runPhase(t, agentapi.PhaseDeploying, task, blockDir, devDir)
			if s := lastSignal(reg); s.Status != agentapi.StatusFailed || s.Error != "disk vda is 2 MiB, the image needs 3 MiB" {
				t.Fatalf("last signal %+v", s)
			}
			if got := power.get(); len(got) != 1 || got[0] != "poweroff" {
				t.Fatalf("power %v", got)
			}
			disk, _ := os.ReadFile(filepath.Join(devDir, "vda"))
			if !bytes.Equal(disk, bytes.Repeat([]byte{0xAA}, len(disk))) {
				t.Fatal("the disk was written")
			}
		})
	}
}

func TestDeployNoRoomForSeed(t *testing.T) {
	raw := testImage(3 * MiB)
	img := httptest.NewServer(&imageServer{data: raw})
	defer img.Close()
	blockDir, devDir := testDisks(t, 0xAA, map[string]int64{"vda": 5 * MiB})
	task := agentapi.Task{Disk: "vda", Image: &agentapi.Image{URL: img.URL, SHA256: sha(raw), Size: int64(len(raw)), FileType: FileTypeRaw}}
	reg, _, _ := runPhase(t, agentapi.PhaseDeploying, task, blockDir, devDir)
	if s := lastSignal(reg); s.Status != agentapi.StatusFailed || s.Error != "no room on vda for the first-boot seed" {
		t.Fatalf("last signal %+v", s)
	}
}

// A tarball needs room for its root partition and the seed: a small disk
// is refused before anything is written.
func TestDeployTarballDiskTooSmall(t *testing.T) {
	blockDir, devDir := testDisks(t, 0, map[string]int64{"vda": 16 * MiB})
	task := agentapi.Task{Image: &agentapi.Image{URL: "http://127.0.0.1:1/x", SHA256: "x", Size: 1, FileType: "tgz"}}
	reg, _, _ := runPhase(t, agentapi.PhaseDeploying, task, blockDir, devDir)
	if s := lastSignal(reg); s.Status != agentapi.StatusFailed || s.Error != "disk vda is 16 MiB, the image needs 80 MiB" {
		t.Fatalf("last signal %+v", s)
	}
}

func TestXZRawSize(t *testing.T) {
	raw := testImage(5 * MiB)
	for _, body := range [][]byte{compress(t, FileTypeXz, raw), xzCLI(t, raw)} {
		if body == nil {
			continue
		}
		srv := httptest.NewServer(&imageServer{data: body})
		n, err := xzRawSize(context.Background(), srv.Client(), srv.URL, int64(len(body)))
		srv.Close()
		if err != nil || n != int64(len(raw)) {
			t.Fatalf("xzRawSize = %d, %v; want %d", n, err, len(raw))
		}
	}
}

func xzCLI(t *testing.T, b []byte) []byte {
	if _, err := exec.LookPath("xz"); err != nil {
		return nil
	}
	cmd := exec.Command("xz", "-T2", "--block-size=1MiB", "-c")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkFAT reads the seed filesystem back: with an independent reader
// of the on-disk format here, and with dosfstools' fsck and mtools when
// they are installed.
func checkFAT(t *testing.T, fs []byte) map[string]string {
	t.Helper()
	files := readFAT(t, fs)
	path := filepath.Join(t.TempDir(), "seed.img")
	os.WriteFile(path, fs, 0o644)
	if _, err := exec.LookPath("fsck.fat"); err == nil {
		if out, err := exec.Command("fsck.fat", "-n", "-v", path).CombinedOutput(); err != nil {
			t.Errorf("fsck.fat: %v\n%s", err, out)
		}
	}
	if os.Geteuid() == 0 {
		// The kernel's own reader, where the kernel has vfat.
		mnt := t.TempDir()
		if out, err := exec.Command("mount", "-o", "loop,ro", "-t", "vfat", path, mnt).CombinedOutput(); err != nil {
			t.Logf("no loop mount (%v): %s", err, bytes.TrimSpace(out))
		} else {
			for name, want := range files {
				if got, err := os.ReadFile(filepath.Join(mnt, name)); err != nil || string(got) != want {
					t.Errorf("mounted %s: %v %q", name, err, got)
				}
			}
			exec.Command("umount", mnt).Run()
		}
	}
	if _, err := exec.LookPath("blkid"); err == nil {
		// What cloud-init looks the seed up by.
		out, err := exec.Command("blkid", "-p", "-o", "export", path).Output()
		if err != nil || !strings.Contains(string(out), "LABEL=CIDATA") || !strings.Contains(string(out), "TYPE=vfat") {
			t.Errorf("blkid: %v\n%s", err, out)
		}
	}
	if _, err := exec.LookPath("mtype"); err == nil {
		for name, want := range files {
			out, err := exec.Command("mtype", "-i", path, "::"+name).Output()
			if err != nil || string(out) != want {
				t.Errorf("mtype %s: %v %q", name, err, out)
			}
		}
		if out, _ := exec.Command("mlabel", "-s", "-i", path, "::").Output(); !strings.Contains(string(out), "CIDATA") {
			t.Errorf("mlabel: %s", out)
		}
	}
	return files
}

// readFAT is a FAT12/16 reader: the boot sector's layout, the root
// directory with long names, cluster chains.
func readFAT(t *testing.T, fs []byte) map[string]string {
	t.Helper()
	le16 := func(b []byte) int { return int(binary.LittleEndian.Uint16(b)) }
	bps, spc, res, nfats, rootEnts, fatSz := le16(fs[11:]), int(fs[13]), le16(fs[14:]), int(fs[16]), le16(fs[17:]), le16(fs[22:])
	if bps != 512 || fs[510] != 0x55 || fs[511] != 0xAA || string(fs[54:59]) != "FAT16" {
		t.Fatalf("bad boot sector")
	}
	if string(fs[43:54]) != "CIDATA     " {
		t.Fatalf("label %q", fs[43:54])
	}
	fat := fs[res*bps:]
	rootOff := (res + nfats*fatSz) * bps
	dataOff := rootOff + rootEnts*32
	out := map[string]string{}
	var long []uint16
	for i := range rootEnts {
		e := fs[rootOff+32*i : rootOff+32*i+32]
		if e[0] == 0 {
			break
		}
		if e[11] == 0x0F {
			var part []uint16
			for _, p := range []int{1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30} {
				c := uint16(le16(e[p:]))
				if c == 0 || c == 0xFFFF {
					break
				}
				part = append(part, c)
			}
			long = append(part, long...)
			continue
		}
		if e[11]&0x08 != 0 {
			if string(e[:11]) != "CIDATA     " {
				t.Errorf("volume label entry %q", e[:11])
			}
			continue
		}
		name := strings.TrimSpace(string(e[:8]))
		if ext := strings.TrimSpace(string(e[8:11])); ext != "" {
			name += "." + ext
		}
		if long != nil {
			name = string(utf16.Decode(long))
			long = nil
		}
		size := int(binary.LittleEndian.Uint32(e[28:]))
		var data []byte
		for c := le16(e[26:]); c >= 2 && c < 0xFFF8; c = le16(fat[2*c:]) {
			off := dataOff + (c-2)*spc*bps
			data = append(data, fs[off:off+spc*bps]...)
		}
		if len(data) < size {
			t.Fatalf("%s: chain holds %d bytes, size %d", name, len(data), size)
		}
		out[name] = string(data[:size])
	}
	return out
}

func TestMakeFATSizes(t *testing.T) {
	for _, mb := range []int64{4, 8, 32} {
		files := []SeedFile{{"meta-data", []byte("instance-id: x\n")}, {"user-data", bytes.Repeat([]byte("x"), 5000)}, {"network-config", nil}, {"A.TXT", []byte("a")}}
		fs, err := MakeFAT(mb*MiB/512, "CIDATA", files)
		if err != nil {
			t.Fatal(err)
		}
		got := checkFAT(t, fs)
		for _, f := range files {
			if got[f.Name] != string(f.Data) {
				t.Errorf("%d MiB: %s = %q", mb, f.Name, got[f.Name])
			}
		}
	}
}

func newServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
