package agent

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// installRootfs partitions t.Disk (MBR, partition 1 active, type 0x83),
// makes an ext4 filesystem on partition 1, extracts the tar stream r into
// it, writes /etc/fstab for the root by UUID and installs extlinux with a
// configuration booting the newest /boot/vmlinuz-*. It returns the bytes of file content extracted.
func installRootfs(r io.Reader, t rootfsTarget) (int64, error) {
	if t.Logf == nil {
		t.Logf = func(string, ...any) {}
	}
	mke2fs, err := findTool("mke2fs")
	if err != nil {
		return 0, err
	}
	extlinux, err := findTool("extlinux")
	if err != nil {
		return 0, err
	}
	mbrCode, err := os.ReadFile(MBRCodeFile)
	if err != nil {
		return 0, fmt.Errorf("boot code: %w", err)
	}
	if len(mbrCode) > 440 {
		return 0, fmt.Errorf("%s is %d bytes, more than 440", MBRCodeFile, len(mbrCode))
	}
	start := int64(alignSec)
	end := (t.Size - rootfsTail) / sector / alignSec * alignSec
	if (end-start)*sector < rootfsMinSize {
		return 0, fmt.Errorf("disk is %d MiB, a root filesystem needs %d MiB", t.Size/MiB, (rootfsMinSize+rootfsTail+MiB)/MiB)
	}
	if end > 1<<32-1 {
		end = (1<<32 - 1) / alignSec * alignSec
	}
	if err := writeRootTable(t.Disk, t.Size, start, end-start); err != nil {
		return 0, fmt.Errorf("partition table: %w", err)
	}
	rereadPartitions(t.Disk)
	part, err := t.Part()
	if err != nil {
		return 0, err
	}
	uuid, err := newUUID()
	if err != nil {
		return 0, err
	}
	// No 64bit feature: extlinux reads the filesystem to boot, and not all
	// its versions follow 64-bit block group descriptors.
	if out, err := exec.Command(mke2fs, "-F", "-q", "-t", "ext4", "-O", "^64bit", "-L", "root", "-U", uuid, part).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("mke2fs %s: %v: %s", part, err, bytes.TrimSpace(out))
	}
	t.Logf("deploy ext4 filesystem uuid=%s on %s (%d MiB)", uuid, part, (end-start)*sector/MiB)
	mnt, err := os.MkdirTemp("", "anvil-root-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(mnt)
	if err := unix.Mount(part, mnt, "ext4", 0, ""); err != nil {
		return 0, fmt.Errorf("mounting %s: %w", part, err)
	}
	mounted := true
	defer func() {
		if mounted {
			unix.Unmount(mnt, 0)
		}
	}()
	n, err := extractTar(r, mnt)
	if err != nil {
		return n, err
	}
	if t.Verify != nil {
		if err := t.Verify(); err != nil {
			return n, err
		}
	}
	if err := writeFstab(mnt, uuid); err != nil {
		return n, err
	}
	if err := writeExtlinux(mnt, extlinux, uuid, t.Logf); err != nil {
		return n, err
	}
	unix.Sync()
	if err := unix.Unmount(mnt, 0); err != nil {
		return n, fmt.Errorf("unmounting %s: %w", part, err)
	}
	mounted = false
	// The boot code last: the disk boots only once everything is there.
	f, err := os.OpenFile(t.Disk, os.O_RDWR, 0)
	if err != nil {
		return n, err
	}
	defer f.Close()
	if _, err := f.WriteAt(mbrCode, 0); err != nil {
		return n, err
	}
	return n, f.Sync()
}

// writeRootTable zeroes the disk's first and last MiB (old tables) and
// writes an MBR with one active Linux partition.
func writeRootTable(dev string, size, start, count int64) error {
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	zero := make([]byte, MiB)
	if _, err := f.WriteAt(zero, size-MiB); err != nil {
		return err
	}
	mbr := zero
	if _, err := rand.Read(mbr[440:444]); err != nil { // disk signature
		return err
	}
	e := mbr[446:462]
	e[0] = 0x80
	copy(e[1:4], []byte{0xFE, 0xFF, 0xFF}) // CHS unused: LBA only
	e[4] = 0x83
	copy(e[5:8], []byte{0xFE, 0xFF, 0xFF})
	binary.LittleEndian.PutUint32(e[8:], uint32(start))
	binary.LittleEndian.PutUint32(e[12:], uint32(count))
	mbr[510], mbr[511] = 0x55, 0xAA
	if _, err := f.WriteAt(mbr, 0); err != nil {
		return err
	}
	return f.Sync()
}

// partitionDev finds partition n of the disk dev in blockDir (sysfs),
// waiting for the kernel to show it, and returns its device node beside
// dev, made when missing.
func partitionDev(blockDir, dev string, n int) (string, error) {
	disk := filepath.Base(dev)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ents, _ := os.ReadDir(filepath.Join(blockDir, disk))
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), disk) || readSysInt(filepath.Join(blockDir, disk, e.Name(), "partition")) != int64(n) {
				continue
			}
			node := filepath.Join(filepath.Dir(dev), e.Name())
			if _, err := os.Stat(node); err == nil {
				return node, nil
			}
			b, err := os.ReadFile(filepath.Join(blockDir, disk, e.Name(), "dev"))
			if err != nil {
				return "", err
			}
			maj, min, ok := strings.Cut(strings.TrimSpace(string(b)), ":")
			ma, err1 := strconv.Atoi(maj)
			mi, err2 := strconv.Atoi(min)
			if !ok || err1 != nil || err2 != nil {
				return "", fmt.Errorf("partition %s: bad dev %q", e.Name(), b)
			}
			if err := unix.Mknod(node, unix.S_IFBLK|0o600, int(unix.Mkdev(uint32(ma), uint32(mi)))); err != nil && !errors.Is(err, os.ErrExist) {
				return "", fmt.Errorf("making %s: %w", node, err)
			}
			return node, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("partition %d of %s did not appear", n, disk)
		}
		time.Sleep(200 * time.Millisecond)
		rereadPartitions(dev)
	}
}

func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0F | 0x40
	b[8] = b[8]&0x3F | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// extractTar extracts the archive into root, keeping modes, ownership,
// times, symbolic and hard links, device nodes and extended attributes.
// Entries never land outside root: names are cleaned, and no entry is
// written through a symbolic link.
func extractTar(r io.Reader, root string) (int64, error) {
	tr := tar.NewReader(r)
	type dirMeta struct {
		path  string
		mode  int64
		mtime time.Time
	}
	var dirs []dirMeta
	checked := map[string]bool{"": true}
	buf := make([]byte, 1*MiB)
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return total, fmt.Errorf("reading the tarball: %w", err)
		}
		rel := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		p := filepath.Join(root, rel)
		// Parents: directories, not symbolic links.
		if rel != "" {
			dir := path.Dir(rel)
			if dir == "." {
				dir = ""
			}
			if !checked[dir] {
				cur := ""
				for _, c := range strings.Split(dir, "/") {
					cur = path.Join(cur, c)
					if checked[cur] {
						continue
					}
					fi, err := os.Lstat(filepath.Join(root, cur))
					switch {
					case errors.Is(err, os.ErrNotExist):
						if err := os.Mkdir(filepath.Join(root, cur), 0o755); err != nil {
							return total, err
						}
					case err != nil:
						return total, err
					case !fi.IsDir():
						return total, fmt.Errorf("tarball entry %s: %s is not a directory", h.Name, cur)
					}
					checked[cur] = true
				}
			}
		}
		if h.Typeflag != tar.TypeDir && rel != "" {
			if fi, err := os.Lstat(p); err == nil {
				if fi.IsDir() {
					os.Remove(p) // fails unless empty, then the entry fails below
				} else if err := os.Remove(p); err != nil {
					return total, err
				}
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if rel != "" {
				if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
					if err == nil {
						os.Remove(p)
					}
					if err := os.Mkdir(p, 0o700); err != nil {
						return total, err
					}
				}
				checked[rel] = true
			}
			dirs = append(dirs, dirMeta{p, h.Mode, h.ModTime})
		case tar.TypeReg, tar.TypeRegA:
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return total, err
			}
			n, err := io.CopyBuffer(f, tr, buf)
			total += n
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return total, fmt.Errorf("writing %s: %w", h.Name, err)
			}
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, p); err != nil {
				return total, err
			}
		case tar.TypeLink:
			target := filepath.Join(root, strings.TrimPrefix(path.Clean("/"+h.Linkname), "/"))
			if err := os.Link(target, p); err != nil {
				return total, fmt.Errorf("hard link %s: %w", h.Name, err)
			}
			continue // the target's metadata is the link's
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			mode := uint32(unix.S_IFIFO)
			if h.Typeflag == tar.TypeChar {
				mode = unix.S_IFCHR
			} else if h.Typeflag == tar.TypeBlock {
				mode = unix.S_IFBLK
			}
			if err := unix.Mknod(p, mode|0o600, int(unix.Mkdev(uint32(h.Devmajor), uint32(h.Devminor)))); err != nil {
				return total, fmt.Errorf("device node %s: %w", h.Name, err)
			}
		case tar.TypeXGlobalHeader:
			continue
		default:
			continue // sockets and the like: nothing to make
		}
		if err := os.Lchown(p, h.Uid, h.Gid); err != nil {
			return total, fmt.Errorf("owner of %s: %w", h.Name, err)
		}
		if h.Typeflag != tar.TypeSymlink && h.Typeflag != tar.TypeDir {
			if err := unix.Chmod(p, uint32(h.Mode&0o7777)); err != nil {
				return total, err
			}
		}
		for k, v := range h.PAXRecords {
			if name, ok := strings.CutPrefix(k, "SCHILY.xattr."); ok {
				if err := unix.Lsetxattr(p, name, []byte(v), 0); err != nil {
					return total, fmt.Errorf("extended attribute %s of %s: %w", name, h.Name, err)
				}
			}
		}
		if h.Typeflag != tar.TypeDir {
			setTimes(p, h.ModTime)
		}
	}
	// Directories last, deepest first: their files changed their times.
	sort.SliceStable(dirs, func(i, j int) bool { return len(dirs[i].path) > len(dirs[j].path) })
	for _, d := range dirs {
		if err := unix.Chmod(d.path, uint32(d.mode&0o7777)); err != nil {
			return total, err
		}
		setTimes(d.path, d.mtime)
	}
	return total, nil
}

func setTimes(p string, mtime time.Time) {
	ts := unix.NsecToTimespec(mtime.UnixNano())
	_ = unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}

// writeExtlinux installs extlinux in root's /boot/extlinux with a
// configuration for the newest kernel in /boot.
func writeExtlinux(root, extlinux, uuid string, logf func(string, ...any)) error {
	kernel, initrd, err := bootFiles(filepath.Join(root, "boot"))
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "boot", "extlinux")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "extlinux.conf"), []byte(extlinuxConfig(kernel, initrd, uuid)), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command(extlinux, "--install", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("extlinux --install: %v: %s", err, bytes.TrimSpace(out))
	}
	logf("deploy boot loader extlinux kernel=/boot/%s initrd=%s", kernel, map[bool]string{true: "/boot/" + initrd, false: "none"}[initrd != ""])
	return nil
}

// bootFiles picks the kernel in bootDir: the newest vmlinuz-<version>
// (else vmlinuz), with initrd.img-<version> (else initrd.img) when there.
// Symbolic links are followed within bootDir, as the boot loader may not.
func bootFiles(bootDir string) (kernel, initrd string, err error) {
	matches, _ := filepath.Glob(filepath.Join(bootDir, "vmlinuz-*"))
	var vs []string
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
			vs = append(vs, strings.TrimPrefix(filepath.Base(m), "vmlinuz-"))
		}
	}
	resolve := func(name string) string {
		p := filepath.Join(bootDir, name)
		fi, err := os.Lstat(p)
		if err != nil {
			return ""
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			if err != nil {
				return ""
			}
			l = filepath.Base(l)
			if fi, err := os.Stat(filepath.Join(bootDir, l)); err == nil && fi.Mode().IsRegular() {
				return l
			}
			return ""
		}
		if fi.Mode().IsRegular() {
			return name
		}
		return ""
	}
	if len(vs) > 0 {
		sort.Slice(vs, func(i, j int) bool { return kernelVersionLess(vs[i], vs[j]) })
		v := vs[len(vs)-1]
		kernel = "vmlinuz-" + v
		initrd = resolve("initrd.img-" + v)
		if initrd == "" {
			initrd = resolve("initrd.img")
		}
		return kernel, initrd, nil
	}
	if kernel = resolve("vmlinuz"); kernel != "" {
		return kernel, resolve("initrd.img"), nil
	}
	return "", "", errors.New("the tarball has no kernel (/boot/vmlinuz-* or /boot/vmlinuz)")
}

// kernelVersionLess compares kernel versions number by number.
func kernelVersionLess(a, b string) bool {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' || r == '+' || r == '~' })
	}
	pa, pb := split(a), split(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] == pb[i] {
			continue
		}
		na, ea := strconv.Atoi(pa[i])
		nb, eb := strconv.Atoi(pb[i])
		if ea == nil && eb == nil {
			return na < nb
		}
		return pa[i] < pb[i]
	}
	return len(pa) < len(pb)
}
