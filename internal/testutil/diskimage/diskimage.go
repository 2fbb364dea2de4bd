// Package diskimage builds a small raw disk image that boots from a BIOS
// machine's first disk (QEMU's virtio-blk under SeaBIOS) and reports, on the
// serial console, the first-boot settings Anvil's deployer gave it.
//
// The image is an MBR (syslinux's boot code) with one active partition
// that fills the rest of the image: a FAT filesystem made bootable with
// syslinux, holding Debian's kernel and a busybox initramfs. Partition slots
// 2-4 are free for the seed partition the deployer adds after the image's
// last partition.
//
// The initramfs loads the virtio and FAT drivers, looks for a FAT partition
// labelled CIDATA (cloud-init NoCloud seed) and prints one line to
// /dev/console and /dev/ttyS0:
//
//	ANVIL-DEPLOYED hostname=<local-hostname from meta-data> userdata=<first line of user-data>
//
// or "ANVIL-DEPLOYED no-seed" when there is none, then sleeps forever, as a
// deployed OS keeps running.
//
// Images are built at test time with mkfs.vfat (dosfstools), mcopy (mtools)
// and syslinux, and cached under os.TempDir() by a hash of their inputs.
package diskimage

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"github.com/anvilmetal/anvil/internal/testutil/buildcache"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/anvilmetal/anvil/internal/kmod"
	"github.com/anvilmetal/anvil/internal/testutil/initramfs"
)

// Marker starts the line the image prints once it has looked for its seed.
const Marker = "ANVIL-DEPLOYED"

// NoSeed is the line printed when no CIDATA partition was found.
const NoSeed = Marker + " no-seed"

// Line is the line printed for a seed with this local-hostname and first
// line of user-data.
func Line(hostname, userDataFirstLine string) string {
	return Marker + " hostname=" + hostname + " userdata=" + userDataFirstLine
}

const (
	// ImageSize is the size of the raw image.
	ImageSize = 48 << 20
	// PartStart is partition 1's first sector (1 MiB, aligned).
	PartStart = 2048
	sector    = 512

	mbrCode   = "/usr/lib/syslinux/mbr/mbr.bin"
	imageFile = "disk.img"
	// version changes the cache key when the way the image is made
	// changes in ways its inputs do not show.
	version = "diskimage-2"
)

// Modules are the kernel modules the initramfs loads (with their
// dependencies) when the kernel does not have them built in: the virtio-blk
// disk and FAT with the default codepage and iocharset.
var Modules = []string{"virtio_pci", "virtio_blk", "vfat", "nls_cp437", "nls_ascii", "nls_iso8859_1", "nls_utf8"}

const syslinuxCfg = `SERIAL 0 115200
DEFAULT anvil
PROMPT 0
TIMEOUT 0
LABEL anvil
  KERNEL vmlinuz
  APPEND initrd=initrd.img console=ttyS0,115200
`

// initScript is /init; @MODULES@ is replaced by the insmod lines.
const initScript = `#!/bin/sh
export PATH=/bin
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t proc proc /proc
mount -t sysfs sysfs /sys
exec </dev/console >/dev/console 2>&1
@MODULES@
# Keep kernel messages from breaking into the lines below.
echo 1 >/proc/sys/kernel/printk
say() {
	echo "$1" >/dev/console
	echo "$1" >/dev/ttyS0
}
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
# Partitions show up with the disk; give a rescan a moment all the same.
sleep 0.5
mkdir -p /seed
found=
labelled=$(findfs LABEL=CIDATA 2>/dev/null || findfs LABEL=cidata 2>/dev/null)
for dev in $labelled /dev/vda2 /dev/vda3 /dev/vda4; do
	[ -b "$dev" ] || continue
	if mount -t vfat -o ro "$dev" /seed 2>/dev/null; then
		if [ -f /seed/meta-data ]; then found=$dev; break; fi
		umount /seed
	fi
done
if [ -n "$found" ]; then
	echo "anvil: seed on $found (labelled CIDATA: ${labelled:-none})"
	host=$(sed -n 's/^local-hostname:[[:space:]]*//p' /seed/meta-data | head -n 1 | tr -d '\r"'"'"'')
	ud=$(head -n 1 /seed/user-data 2>/dev/null | tr -d '\r')
	say "ANVIL-DEPLOYED hostname=$host userdata=$ud"
else
	say "ANVIL-DEPLOYED no-seed"
fi
while :; do sleep 3600; done
`

var (
	once          sync.Once
	image         string
	skip, failure error

	gzOnce, xzOnce  sync.Once
	gzPath, xzPath  string
	gzErr, xzErr    error
	xzSkip          error
	gzSize, xzSize  int64
	imageSizeOnDisk int64
)

// Build returns the path of the cached raw image and its size, building it
// the first time. It skips the test when the tools or the kernel are
// missing. The file is shared: copy it before writing to it.
func Build(t testing.TB) (path string, size int64) {
	t.Helper()
	once.Do(build)
	if skip != nil {
		t.Skip(skip)
	}
	if failure != nil {
		t.Fatal(failure)
	}
	return image, imageSizeOnDisk
}

// BuildGz returns the path and size of the image compressed with gzip
// (image.gz next to the raw image).
func BuildGz(t testing.TB) (path string, size int64) {
	t.Helper()
	raw, _ := Build(t)
	gzOnce.Do(func() {
		gzPath = raw + ".gz"
		gzSize, gzErr = compressed(gzPath, func(dst io.Writer) error {
			src, err := os.Open(raw)
			if err != nil {
				return err
			}
			defer src.Close()
			zw, err := gzip.NewWriterLevel(dst, gzip.BestSpeed)
			if err != nil {
				return err
			}
			if _, err := io.Copy(zw, src); err != nil {
				return err
			}
			return zw.Close()
		})
	})
	if gzErr != nil {
		t.Fatal(gzErr)
	}
	return gzPath, gzSize
}

// BuildXz returns the path and size of the image compressed with the xz
// command (package xz-utils); it skips the test when xz is not installed.
func BuildXz(t testing.TB) (path string, size int64) {
	t.Helper()
	raw, _ := Build(t)
	xzOnce.Do(func() {
		if _, err := exec.LookPath("xz"); err != nil {
			xzSkip = fmt.Errorf("xz (package xz-utils) is not installed: %w", err)
			return
		}
		xzPath = raw + ".xz"
		xzSize, xzErr = compressed(xzPath, func(dst io.Writer) error {
			cmd := exec.Command("xz", "-c", "-T1", "-3", raw)
			cmd.Stdout = dst
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("xz: %v: %s", err, stderr.String())
			}
			return nil
		})
	})
	if xzSkip != nil {
		t.Skip(xzSkip)
	}
	if xzErr != nil {
		t.Fatal(xzErr)
	}
	return xzPath, xzSize
}

// compressed makes path with write unless it is already there, through a
// temporary file so a half-written one is never seen.
func compressed(path string, write func(io.Writer) error) (int64, error) {
	if fi, err := os.Stat(path); err == nil {
		return fi.Size(), nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// inputs is everything that goes into an image.
type inputs struct {
	kernel, initrd, cfg, mbr []byte
	tools                    map[string]string // name → path
}

func build() {
	in, err := gather()
	if err != nil {
		skip = err
		return
	}
	h := sha256.New()
	io.WriteString(h, version+"\x00")
	for _, b := range [][]byte{in.kernel, in.initrd, in.cfg, in.mbr} {
		fmt.Fprintf(h, "%d\x00", len(b))
		h.Write(b)
	}
	for _, name := range []string{"mkfs.vfat", "mcopy", "syslinux"} {
		b, err := os.ReadFile(in.tools[name])
		if err != nil {
			failure = err
			return
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	key := hex.EncodeToString(h.Sum(nil))
	fresh := false
	dir, err := buildcache.Dir("diskimage", key, imageFile, func(tmp string) error {
		fresh = true
		return makeImage(filepath.Join(tmp, imageFile), tmp, in)
	})
	if err != nil {
		failure = err
		return
	}
	image = filepath.Join(dir, imageFile)
	imageSizeOnDisk = ImageSize
	if fi, err := os.Stat(image); err == nil && !fresh {
		imageSizeOnDisk = fi.Size()
	}
}

// gather reads the kernel, builds the initramfs and finds the tools; any
// error means the image cannot be built here and the test is skipped.
func gather() (*inputs, error) {
	in := &inputs{tools: map[string]string{}}
	for _, tool := range []struct{ name, pkg string }{{"mkfs.vfat", "dosfstools"}, {"mcopy", "mtools"}, {"syslinux", "syslinux"}} {
		p, err := exec.LookPath(tool.name)
		if err != nil {
			return nil, fmt.Errorf("%s (package %s) is not installed", tool.name, tool.pkg)
		}
		in.tools[tool.name] = p
	}
	var err error
	if in.mbr, err = os.ReadFile(mbrCode); err != nil {
		return nil, fmt.Errorf("MBR boot code (package syslinux-common): %w", err)
	}
	if len(in.mbr) > 440 {
		return nil, fmt.Errorf("%s is %d bytes, more than the 440 before the disk signature", mbrCode, len(in.mbr))
	}
	kv, err := kmod.NewestKernel("/boot")
	if err != nil {
		return nil, err
	}
	if in.kernel, err = os.ReadFile(filepath.Join("/boot", "vmlinuz-"+kv)); err != nil {
		return nil, err
	}
	if in.initrd, err = Initramfs(kv); err != nil {
		return nil, err
	}
	in.cfg = []byte(syslinuxCfg)
	return in, nil
}

// Initramfs returns the gzipped newc initramfs for kernel version kv:
// busybox, the /init script and the Modules it needs from
// /lib/modules/<kv>.
func Initramfs(kv string) ([]byte, error) {
	modDir := filepath.Join("/lib/modules", kv)
	order, err := kmod.Load(modDir, Modules)
	if err != nil {
		return nil, err
	}
	var insmods strings.Builder
	mods := map[string][]byte{}
	for _, m := range order {
		mods[m.Name] = m.Data
		fmt.Fprintf(&insmods, "insmod /lib/modules/%s.ko\n", m.Name)
	}
	files, err := initramfs.Busybox(strings.Replace(initScript, "@MODULES@", insmods.String(), 1))
	if err != nil {
		return nil, err
	}
	for _, applet := range []string{"insmod", "mkdir", "findfs", "sed", "head", "tr", "umount"} {
		files["bin/"+applet] = initramfs.File{Link: "busybox"}
	}
	files["lib"] = initramfs.File{Dir: true, Mode: 0o755}
	files["lib/modules"] = initramfs.File{Dir: true, Mode: 0o755}
	for name, data := range mods {
		files["lib/modules/"+name+".ko"] = initramfs.File{Mode: 0o644, Data: data}
	}
	var buf bytes.Buffer
	if err := initramfs.Write(&buf, files); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// makeImage writes the image to path, using work for scratch files.
func makeImage(path, work string, in *inputs) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := f.Truncate(ImageSize); err != nil {
		f.Close()
		return err
	}
	mbr := make([]byte, sector)
	copy(mbr, in.mbr)
	binary.LittleEndian.PutUint32(mbr[440:], 0x414e5649) // disk signature "IVNA"
	sectors := uint32(ImageSize/sector) - PartStart
	PutPartition(mbr, 0, true, 0x0e, PartStart, sectors) // FAT16 LBA
	if _, err := f.WriteAt(mbr, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}

	off := fmt.Sprint(PartStart * sector)
	// mkfs.vfat takes the size in KiB blocks; -h sets the hidden sectors
	// (the partition's start), which syslinux's boot sector relies on.
	if err := run(in.tools["mkfs.vfat"], "-F", "16", "-n", "ANVILBOOT", "-i", "414e5649", "-h", fmt.Sprint(PartStart),
		"--offset", fmt.Sprint(PartStart), path, fmt.Sprint(uint64(sectors)*sector/1024)); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"vmlinuz": in.kernel, "initrd.img": in.initrd, "syslinux.cfg": in.cfg} {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		if err := run(in.tools["mcopy"], "-o", "-i", path+"@@"+off, p, "::"+name); err != nil {
			return err
		}
		os.Remove(p)
	}
	return run(in.tools["syslinux"], "--install", "--offset", off, path)
}

// PutPartition fills MBR partition entry i (0-3) of the sector mbr with an
// LBA-only entry and sets the boot signature. CHS fields are set to the
// "beyond CHS" value, as tools do for disks addressed by LBA.
func PutPartition(mbr []byte, i int, active bool, typ byte, start, sectors uint32) {
	e := mbr[446+16*i : 446+16*(i+1)]
	e[0] = 0
	if active {
		e[0] = 0x80
	}
	copy(e[1:4], []byte{0xfe, 0xff, 0xff})
	e[4] = typ
	copy(e[5:8], []byte{0xfe, 0xff, 0xff})
	binary.LittleEndian.PutUint32(e[8:], start)
	binary.LittleEndian.PutUint32(e[12:], sectors)
	mbr[510], mbr[511] = 0x55, 0xaa
}

func run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return nil
}
