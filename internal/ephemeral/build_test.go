package ephemeral

import (
	"bytes"
	"compress/gzip"
	"github.com/anvilmetal/anvil/internal/kmod"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/agent"
)

// fakeKernel lays out /boot and /lib/modules for version v with a few
// modules, one of them gzipped, one built in.
func fakeKernel(t *testing.T) (boot, mods string) {
	t.Helper()
	root := t.TempDir()
	boot, mods = filepath.Join(root, "boot"), filepath.Join(root, "modules")
	w := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w(filepath.Join(boot, "vmlinuz-6.1.0-9-amd64"), "old kernel")
	w(filepath.Join(boot, "vmlinuz-6.1.0-10-amd64"), "kernel")
	w(filepath.Join(mods, "6.1.0-10-amd64/modules.dep"), strings.Join([]string{
		"kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko kernel/drivers/virtio/virtio.ko",
		"kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko",
		"kernel/net/core/failover.ko:",
		"kernel/drivers/virtio/virtio.ko:",
		"kernel/lib/crc-t10dif.ko.gz:",
		"kernel/drivers/scsi/sd_mod.ko: kernel/lib/crc-t10dif.ko.gz",
	}, "\n")+"\n")
	w(filepath.Join(mods, "6.1.0-10-amd64/modules.builtin"), "kernel/net/packet/af_packet.ko\n")
	for _, m := range []string{"drivers/net/virtio_net.ko", "drivers/net/net_failover.ko", "net/core/failover.ko", "drivers/virtio/virtio.ko", "drivers/scsi/sd_mod.ko"} {
		w(filepath.Join(mods, "6.1.0-10-amd64/kernel", m), "ELF "+kmod.Name(m))
	}
	var gz bytes.Buffer
	if err := writeGzip(&gz, []byte("ELF crc_t10dif")); err != nil {
		t.Fatal(err)
	}
	w(filepath.Join(mods, "6.1.0-10-amd64/kernel/lib/crc-t10dif.ko.gz"), gz.String())
	return boot, mods
}

func TestBuild(t *testing.T) {
	boot, mods := fakeKernel(t)
	agentBin := filepath.Join(t.TempDir(), "agent")
	if err := os.WriteFile(agentBin, []byte("AGENT"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	m, err := Build(Options{Out: out, BootDir: boot, ModulesDir: mods, Agent: agentBin,
		Modules: []string{"virtio_net", "sd_mod", "af_packet", "e1000"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.KernelVersion != "6.1.0-10-amd64" {
		t.Errorf("newest kernel = %s", m.KernelVersion)
	}
	if want := []string{"failover", "net_failover", "virtio", "virtio_net", "crc_t10dif", "sd_mod"}; !slices.Equal(m.Modules, want) {
		t.Errorf("modules %v, want %v", m.Modules, want)
	}
	if !slices.Equal(m.Builtin, []string{"af_packet"}) || !slices.Equal(m.Missing, []string{"e1000"}) {
		t.Errorf("builtin %v missing %v", m.Builtin, m.Missing)
	}
	if k, _ := os.ReadFile(filepath.Join(out, KernelFile)); string(k) != "kernel" || m.Kernel.Size != 6 {
		t.Errorf("kernel %q", k)
	}
	if _, err := os.Stat(filepath.Join(out, ManifestFile)); err != nil {
		t.Error(err)
	}
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("cpio not installed")
	}
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", "gzip -dc "+filepath.Join(out, InitrdFile)+" | cpio -idm --quiet")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio: %v %s", err, b)
	}
	for p, want := range map[string]string{
		"init": "AGENT", strings.TrimPrefix(agent.ModulesList, "/"): "failover.ko\nnet_failover.ko\nvirtio.ko\nvirtio_net.ko\ncrc_t10dif.ko\nsd_mod.ko\n",
		"lib/modules/crc_t10dif.ko": "ELF crc_t10dif", "lib/modules/virtio_net.ko": "ELF virtio_net",
	} {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != want {
			t.Errorf("%s = %q %v, want %q", p, b, err, want)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "init")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("init: %v %v", st, err)
	}
}

func writeGzip(w io.Writer, data []byte) error {
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	return zw.Close()
}
