package cli

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ulikunitz/xz"
)

// The file types Anvil deploys: root filesystem tarballs (laid on a
// partition the deployer makes) and whole-disk images (written as they
// are). The server takes MAAS's other names too, but no deployer of
// Anvil's can install them, so the CLI does not upload them.
var uploadFiletypes = []string{"tgz", "tbz", "txz", "ddraw", "ddgz", "ddxz"}

// Magic numbers at the start of a file.
var (
	gzipMagic  = []byte{0x1f, 0x8b}
	bzip2Magic = []byte("BZh")
	xzMagic    = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	zstdMagic  = []byte{0x28, 0xb5, 0x2f, 0xfd}
	qcowMagic  = []byte{'Q', 'F', 'I', 0xfb}
	vmdkMagic  = []byte("KDMV")
)

// sniffImage reads the start of an image and says which upload file type
// its content is, or why it is none of them, in words an operator can act
// on. The compressed kinds are decompressed just far enough to tell a
// tarball (a ustar header) from a disk image (a boot sector's 55 AA, which
// MBR and GPT disks both have).
func sniffImage(r io.Reader) (string, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(8)
	var (
		inner    io.Reader
		tar, dd  string
		compName string
	)
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		z, err := gzip.NewReader(br)
		if err != nil {
			return "", fmt.Errorf("it starts as gzip but does not decompress: %w", err)
		}
		inner, tar, dd, compName = z, "tgz", "ddgz", "gzip"
	case bytes.HasPrefix(head, xzMagic):
		z, err := xz.NewReader(br)
		if err != nil {
			return "", fmt.Errorf("it starts as xz but does not decompress: %w", err)
		}
		inner, tar, dd, compName = z, "txz", "ddxz", "xz"
	case bytes.HasPrefix(head, bzip2Magic):
		inner, tar, dd, compName = bzip2.NewReader(br), "tbz", "", "bzip2"
	case bytes.HasPrefix(head, zstdMagic):
		return "", errors.New("it is zstd-compressed; Anvil takes gzip, xz or bzip2 tarballs and gzip or xz disk images: recompress it (zstd -dc FILE | xz)")
	case bytes.HasPrefix(head, qcowMagic):
		return "", errors.New("it is a qcow2 image; convert it to a raw disk image first (qemu-img convert -O raw FILE disk.img)")
	case bytes.HasPrefix(head, vmdkMagic):
		return "", errors.New("it is a VMDK image; convert it to a raw disk image first (qemu-img convert -O raw FILE disk.img)")
	default:
		inner, tar, dd = br, "", "ddraw"
	}
	block := make([]byte, 512)
	n, err := io.ReadFull(inner, block)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("it does not decompress as %s: %w", compName, err)
	}
	block = block[:n]
	switch {
	case len(block) >= 262 && string(block[257:262]) == "ustar":
		if tar == "" {
			return "", errors.New("it is an uncompressed tarball; compress it (gzip or xz) to upload it as a root filesystem tarball")
		}
		return tar, nil
	case len(block) == 512 && block[510] == 0x55 && block[511] == 0xaa:
		if dd == "" {
			return "", fmt.Errorf("it is a %s-compressed disk image; Anvil deploys raw, gzip or xz disk images: recompress it with xz", compName)
		}
		return dd, nil
	case compName != "":
		return "", fmt.Errorf("it is %s-compressed but holds neither a tarball nor a disk image with a partition table", compName)
	}
	return "", errors.New("it is neither a root filesystem tarball (.tar.gz, .tar.xz, .tar.bz2) nor a disk image " +
		"(raw with an MBR or GPT partition table, or gzip or xz of one)")
}

// checkFiletype compares the file type a user gave with the one the
// content has. given "" takes the content's.
func checkFiletype(given, found string) (string, error) {
	if given == "" {
		return found, nil
	}
	if !slices.Contains(uploadFiletypes, given) {
		return "", fmt.Errorf("--filetype %q: Anvil deploys %s", given, strings.Join(uploadFiletypes, ", "))
	}
	if given != found {
		return "", fmt.Errorf("--filetype %s, but the content is %s (%s)", given, found, describeFiletype(found))
	}
	return given, nil
}

func describeFiletype(ft string) string {
	return map[string]string{
		"tgz": "a gzip root filesystem tarball", "tbz": "a bzip2 root filesystem tarball", "txz": "an xz root filesystem tarball",
		"ddraw": "a raw disk image", "ddgz": "a gzip disk image", "ddxz": "an xz disk image",
	}[ft]
}
