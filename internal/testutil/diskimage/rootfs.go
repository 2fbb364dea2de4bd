package diskimage

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/anvilmetal/anvil/internal/kmod"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// RootfsKernelVersion names the kernel in the root filesystem tarball
// (/boot/vmlinuz-<it>); it is the build machine's newest kernel.
var RootfsKernelVersion string

var (
	rootfsOnce sync.Once
	rootfsPath string
	rootfsSize int64
	rootfsSkip error
	rootfsErr  error
)

const rootfsVersion = "rootfs-2"

// BuildRootfs returns the path and size of a gzipped root filesystem
// tarball (.tgz): Debian's kernel as /boot/vmlinuz-<version> and the
// busybox initramfs of Initramfs as /boot/initrd.img-<version>, which does
// all the work (it prints the ANVIL-DEPLOYED line), in a small tree with
// what installers must keep: directories, modes (setuid too), owners,
// symbolic and hard links, device nodes. It also boots as a root of its
// own, as a deployment to memory runs it: /sbin/init (busybox sh, with
// busybox as /usr/bin/busybox) prints the ANVIL-DEPLOYED line from the
// NoCloud seed in /var/lib/cloud/seed/nocloud. It skips the test when the
// kernel or busybox is missing. The file is shared and cached under os.TempDir().
func BuildRootfs(t testing.TB) (path string, size int64) {
	t.Helper()
	rootfsOnce.Do(buildRootfs)
	if rootfsSkip != nil {
		t.Skip(rootfsSkip)
	}
	if rootfsErr != nil {
		t.Fatal(rootfsErr)
	}
	return rootfsPath, rootfsSize
}

func buildRootfs() {
	kv, err := kmod.NewestKernel("/boot")
	if err != nil {
		rootfsSkip = err
		return
	}
	kernel, err := os.ReadFile(filepath.Join("/boot", "vmlinuz-"+kv))
	if err != nil {
		rootfsSkip = err
		return
	}
	initrd, err := Initramfs(kv)
	if err != nil {
		rootfsSkip = err
		return
	}
	bbPath, err := exec.LookPath("busybox")
	if err != nil {
		rootfsSkip = err
		return
	}
	busybox, err := os.ReadFile(bbPath)
	if err != nil {
		rootfsSkip = err
		return
	}
	RootfsKernelVersion = kv
	h := sha256.New()
	io.WriteString(h, rootfsVersion+"\x00"+kv+"\x00"+rootInit+"\x00")
	for _, b := range [][]byte{kernel, initrd, busybox} {
		fmt.Fprintf(h, "%d\x00", len(b))
		h.Write(b)
	}
	key := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(os.TempDir(), "anvil-rootfs-"+key[:16])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		rootfsErr = err
		return
	}
	rootfsPath = filepath.Join(dir, "rootfs.tgz")
	rootfsSize, rootfsErr = compressed(rootfsPath, func(w io.Writer) error {
		return writeRootfs(w, kv, kernel, initrd, busybox)
	})
}

// RootfsFiles are the tarball's entries besides /boot's kernel and initrd,
// for tests that check what an installer made of them.
var RootfsFiles = []tar.Header{
	{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "./boot/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "./dev/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "./dev/console", Typeflag: tar.TypeChar, Mode: 0o600, Devmajor: 5, Devminor: 1},
	{Name: "./dev/null", Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 3},
	{Name: "./etc/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "./etc/hostname", Typeflag: tar.TypeReg, Mode: 0o644},
	{Name: "./etc/shadow", Typeflag: tar.TypeReg, Mode: 0o640, Gid: 42},
	{Name: "./home/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "./home/user/", Typeflag: tar.TypeDir, Mode: 0o700, Uid: 1000, Gid: 1000},
	{Name: "./home/user/notes", Typeflag: tar.TypeReg, Mode: 0o600, Uid: 1000, Gid: 1000},
	{Name: "./home/user/notes.link", Typeflag: tar.TypeLink, Linkname: "./home/user/notes"},
	{Name: "./tmp/", Typeflag: tar.TypeDir, Mode: 0o1777},
	{Name: "./usr/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "./usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "./usr/bin/su", Typeflag: tar.TypeReg, Mode: 0o4755},
	{Name: "./usr/bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755},
	{Name: "./sbin", Typeflag: tar.TypeSymlink, Linkname: "usr/sbin"},
	{Name: "./usr/sbin/", Typeflag: tar.TypeDir, Mode: 0o755},
	{Name: "./usr/sbin/init", Typeflag: tar.TypeReg, Mode: 0o755},
	{Name: "./vmlinuz", Typeflag: tar.TypeSymlink, Linkname: "boot/vmlinuz-@KV@"},
	{Name: "./initrd.img", Typeflag: tar.TypeSymlink, Linkname: "boot/initrd.img-@KV@"},
}

// rootInit is /sbin/init, for the tree booted as a root of its own (a
// deployment to memory switches to it with the seed written in).
const rootInit = `#!/usr/bin/busybox sh
bb=/usr/bin/busybox
$bb mount -t devtmpfs devtmpfs /dev 2>/dev/null
$bb mount -t proc proc /proc 2>/dev/null
say() {
	echo "$1" >/dev/console
	echo "$1" >/dev/ttyS0
}
seed=/var/lib/cloud/seed/nocloud
echo "anvil: root filesystem booted as / (seed in $seed: $([ -f $seed/meta-data ] && echo yes || echo no))" >/dev/console
if [ -f $seed/meta-data ]; then
	host=$($bb sed -n 's/^local-hostname:[[:space:]]*//p' $seed/meta-data | $bb head -n 1 | $bb tr -d '\r"'"'"'')
	ud=$($bb head -n 1 $seed/user-data 2>/dev/null | $bb tr -d '\r')
	say "ANVIL-DEPLOYED hostname=$host userdata=$ud"
else
	say "ANVIL-DEPLOYED no-seed"
fi
while :; do $bb sleep 3600; done
`

func writeRootfs(w io.Writer, kv string, kernel, initrd, busybox []byte) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	mtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	content := map[string][]byte{
		"./etc/hostname":    []byte("rootfs\n"),
		"./etc/shadow":      []byte("root:*:19000:0:99999:7:::\n"),
		"./home/user/notes": []byte("kept\n"),
		"./usr/bin/su":      []byte("#!/bin/sh\n"),
		"./usr/bin/busybox": busybox,
		"./usr/sbin/init":   []byte(rootInit),
	}
	put := func(h tar.Header, data []byte) error {
		h.ModTime = mtime
		h.Format = tar.FormatPAX
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(&h); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, h := range RootfsFiles {
		if h.Typeflag == tar.TypeSymlink {
			h.Linkname = strings.ReplaceAll(h.Linkname, "@KV@", kv)
		}
		if err := put(h, content[h.Name]); err != nil {
			return err
		}
		if h.Name == "./boot/" {
			if err := put(tar.Header{Name: "./boot/vmlinuz-" + kv, Typeflag: tar.TypeReg, Mode: 0o644}, kernel); err != nil {
				return err
			}
			if err := put(tar.Header{Name: "./boot/initrd.img-" + kv, Typeflag: tar.TypeReg, Mode: 0o644}, initrd); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
