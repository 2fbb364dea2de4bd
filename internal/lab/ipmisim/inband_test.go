package ipmisim

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power/ipmi"
	"github.com/anvilmetal/anvil/internal/testutil/initramfs"
)

// kernel returns the host's Debian kernel and its module directory.
func kernel(t *testing.T) (vmlinuz, modDir string) {
	t.Helper()
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		rel := unix.ByteSliceToString(u.Release[:])
		if _, err := os.Stat("/boot/vmlinuz-" + rel); err == nil {
			return "/boot/vmlinuz-" + rel, "/lib/modules/" + rel
		}
	}
	ks, _ := filepath.Glob("/boot/vmlinuz-*")
	for _, k := range ks {
		rel := strings.TrimPrefix(filepath.Base(k), "vmlinuz-")
		if _, err := os.Stat(filepath.Join("/lib/modules", rel, "modules.dep")); err == nil {
			return k, filepath.Join("/lib/modules", rel)
		}
	}
	t.Skip("no /boot/vmlinuz-* with modules in /lib/modules")
	return "", ""
}

// moduleOrder lists the files of the named modules and of what they
// depend on, dependencies first, from modules.dep.
func moduleOrder(t *testing.T, modDir string, names ...string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(modDir, "modules.dep"))
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	deps := map[string][]string{}
	byName := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		mod, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		deps[mod] = strings.Fields(rest)
		base := filepath.Base(mod)
		byName[base[:strings.Index(base, ".ko")]] = mod
	}
	var order []string
	seen := map[string]bool{}
	var visit func(string)
	visit = func(mod string) {
		if seen[mod] {
			return
		}
		seen[mod] = true
		// modules.dep lists every dependency, nearest first: load them in
		// reverse.
		ds := deps[mod]
		for i := len(ds) - 1; i >= 0; i-- {
			visit(ds[i])
		}
		order = append(order, mod)
	}
	for _, n := range names {
		mod, ok := byName[n]
		if !ok {
			t.Skipf("module %s is not in %s", n, modDir)
		}
		if !strings.HasSuffix(mod, ".ko") {
			t.Skipf("module %s is compressed (%s): the test guest loads plain .ko files", n, mod)
		}
		visit(mod)
	}
	return order
}

// TestInBand: the guest reads the BMC's LAN configuration through its
// KCS interface, as a commissioning OS does, and powers off; the BMC then
// reports the machine off.
func TestInBand(t *testing.T) {
	needTools(t)
	vmlinuz, modDir := kernel(t)
	dir := t.TempDir()

	// The guest: a static Go /init and the IPMI modules.
	initBin := filepath.Join(dir, "init")
	build := exec.Command("go", "build", "-o", initBin, "./testdata/lanread")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the guest: %v\n%s", err, out)
	}
	initData, err := os.ReadFile(initBin)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]initramfs.File{
		"init": {Mode: 0o755, Data: initData}, "modules": {Dir: true, Mode: 0o755},
		"dev": {Dir: true, Mode: 0o755}, "proc": {Dir: true, Mode: 0o755}, "sys": {Dir: true, Mode: 0o755},
	}
	for i, mod := range moduleOrder(t, modDir, "ipmi_msghandler", "ipmi_devintf", "ipmi_si") {
		data, err := os.ReadFile(filepath.Join(modDir, mod))
		if err != nil {
			t.Fatal(err)
		}
		files[fmt.Sprintf("modules/%02d-%s", i, filepath.Base(mod))] = initramfs.File{Mode: 0o644, Data: data}
	}
	var cpio bytes.Buffer
	if err := initramfs.Write(&cpio, files); err != nil {
		t.Fatal(err)
	}
	initrd := filepath.Join(dir, "initrd.gz")
	if err := os.WriteFile(initrd, cpio.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	q := qemuConfig()
	q.Memory = 512
	q.Extra = []string{"-kernel", vmlinuz, "-initrd", initrd, "-append", "console=ttyS0 panic=-1 loglevel=4"}
	b := start(t, Config{Dir: filepath.Join(dir, "bmc"), Addr: "127.0.0.1", Port: freeUDPPort(t), QEMU: q})
	d := ipmi.Driver{}
	p := b.Params()
	ctx, cancel := context.WithTimeout(context.Background(), 110*time.Second)
	defer cancel()

	t0 := time.Now()
	if err := d.PowerOn(ctx, p); err != nil {
		t.Fatalf("power on: %v", err)
	}
	// The line's end too: the serial log may be read mid-line.
	lanRE := regexp.MustCompile(`lan ip=(\S+) mac=(\S+)\r?\n`)
	var got []string
	took := waitFor(t, "the guest's LAN report", 90*time.Second, func() bool {
		s, _ := os.ReadFile(b.Serial())
		if bytes.Contains(s, []byte("lanread: ")) {
			t.Fatalf("guest failed:\n%s", tail(b.Serial()))
		}
		got = lanRE.FindStringSubmatch(string(s))
		return got != nil
	})
	t.Logf("guest read its BMC's LAN configuration %s after power on", took)
	if got[1] != "127.0.0.1" || got[2] != testMAC {
		t.Fatalf("guest read ip=%s mac=%s, want 127.0.0.1 %s", got[1], got[2], testMAC)
	}
	// The guest powers itself off: the BMC sees it.
	waitFor(t, "the guest to power off", 20*time.Second, func() bool { return !b.Running() })
	st, err := d.Query(ctx, p)
	if err != nil || st != machine.PowerOff {
		t.Fatalf("after the guest powered off: %s %v", st, err)
	}
	t.Logf("power on to off: %s", time.Since(t0))
}
