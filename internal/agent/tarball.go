package agent

import (
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/ulikunitz/xz"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// Root filesystem tarball file types: the image is a root filesystem laid
// on a partition the deployer makes, with a boot loader (legacy BIOS).
const (
	FileTypeTgz = "tgz"
	FileTypeTbz = "tbz"
	FileTypeTxz = "txz"
)

// Where the deployer puts a tarball's root filesystem: partition 1 of an
// MBR, from 1 MiB to rootfsTail before the disk's end (room for the seed
// partition), with this much at least.
const (
	rootfsTail    = 16 * MiB
	rootfsMinSize = 64 * MiB
)

// Files the ephemeral environment carries for root filesystem tarballs
// (the initramfs builder copies them from the build machine, with the
// shared libraries the programs need).
const (
	MBRCodeFile = "/usr/lib/syslinux/mbr/mbr.bin"
	Mke2fsConf  = "/etc/mke2fs.conf"
)

// RootfsTools are the programs the deployer runs for tarballs.
var RootfsTools = []string{"mke2fs", "extlinux"}

// toolDirs are searched for RootfsTools (the agent as /init has no PATH).
var toolDirs = []string{"/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// rootfsPartition finds partition 1 of dev once its table is written.
var rootfsPartition = func(blockDir, dev string) (string, error) { return partitionDev(blockDir, dev, 1) }

// isTarball says whether the file type is a root filesystem tarball.
func isTarball(fileType string) bool {
	switch fileType {
	case FileTypeTgz, FileTypeTbz, FileTypeTxz:
		return true
	}
	return false
}

// readErr remembers the first error its reader returned, so a failure
// while extracting is told apart from one while downloading or
// decompressing.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// writeTarball lays the tarball at src on disk: partition table, ext4
// filesystem, the tarball's files, boot loader. The downloaded bytes'
// SHA-256 and length are verified before the boot loader is installed. It
// returns the bytes extracted.
func (a *Agent) writeTarball(ctx context.Context, hc *http.Client, src string, img agentapi.Image, dev string, disk Disk) (int64, error) {
	return a.unpackTarball(ctx, hc, src, img, func(r io.Reader, verify func() error) (int64, error) {
		return installRootfs(r, rootfsTarget{
			Disk:   dev,
			Size:   disk.Size,
			Part:   func() (string, error) { return rootfsPartition(a.BlockDir, dev) },
			Logf:   a.Logf,
			Verify: verify,
		})
	})
}

// unpackTarball downloads and decompresses the tarball at src and hands
// the tar stream to install, with verify: the download's checksum and
// length, to run once the archive is extracted and before anything makes
// the disks bootable. It returns what install does.
func (a *Agent) unpackTarball(ctx context.Context, hc *http.Client, src string, img agentapi.Image, install func(r io.Reader, verify func() error) (int64, error)) (int64, error) {
	dl := &download{ctx: ctx, hc: hc, url: src, size: img.Size, backoff: a.Backoff, logf: a.Logf}
	defer dl.close()
	sum := sha256.New()
	cnt := &counter{r: io.TeeReader(dl, sum)}
	br := bufio.NewReaderSize(cnt, 1*MiB)
	var dec io.Reader
	var err error
	switch img.FileType {
	case FileTypeTgz:
		dec, err = gzip.NewReader(br)
	case FileTypeTbz:
		dec = bzip2.NewReader(br)
	case FileTypeTxz:
		dec, err = xz.NewReader(br)
	default:
		return 0, fmt.Errorf("unknown tarball file type %q", img.FileType)
	}
	if err != nil {
		return 0, a.readFailure(err, img, br, sum, cnt)
	}
	re := &readErr{r: dec}
	verify := func() error {
		// Hash whatever follows the archive too.
		if _, err := io.Copy(io.Discard, re); err != nil {
			return a.readFailure(err, img, br, sum, cnt)
		}
		if _, err := io.Copy(io.Discard, br); err != nil {
			return err
		}
		return verify(img, sum, cnt.n)
	}
	n, err := install(re, verify)
	if err != nil && re.err != nil {
		return n, a.readFailure(re.err, img, br, sum, cnt)
	}
	return n, err
}

// rootfsTarget says where installRootfs works.
type rootfsTarget struct {
	Disk string                 // the whole disk's device (or an image file)
	Size int64                  // its size in bytes
	Part func() (string, error) // partition 1's device, once the table is written
	Logf func(string, ...any)   // progress lines
	// Verify runs once the archive is extracted, before the boot loader
	// goes in: the download's checksum.
	Verify func() error
}

// findTool finds a program in toolDirs.
func findTool(name string) (string, error) {
	for _, d := range toolDirs {
		p := d + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not in this environment", name)
}

var errNoRootfs = errors.New("root filesystem tarballs need Linux")
