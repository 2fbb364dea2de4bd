package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testRootUUID = "0b9d6c41-5a0e-4d1e-9f3c-2f1d7c8e9a10"

func TestWriteFstab(t *testing.T) {
	root := "UUID=" + testRootUUID + " / ext4 defaults,errors=remount-ro 0 1\n"
	for _, c := range []struct {
		name, before string // before "" is no fstab at all
		want         string // the lines after the header
	}{
		{"none", "", root},
		{"debootstrap's placeholder", "# UNCONFIGURED FSTAB FOR BASE SYSTEM\n", root},
		{"root replaced, others kept",
			"# /etc/fstab\nUUID=1111 / ext4 ro 0 0\n/dev/sdb1 /srv xfs defaults 0 2\n\ntmpfs /tmp tmpfs nosuid 0 0\n",
			root + "# /etc/fstab\n/dev/sdb1 /srv xfs defaults 0 2\ntmpfs /tmp tmpfs nosuid 0 0\n"},
		{"commented root kept", "#UUID=1111 / ext4 defaults 0 1\n", root + "#UUID=1111 / ext4 defaults 0 1\n"},
	} {
		dir := t.TempDir()
		if c.before != "" {
			os.MkdirAll(filepath.Join(dir, "etc"), 0o755)
			if err := os.WriteFile(filepath.Join(dir, "etc", "fstab"), []byte(c.before), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := writeFstab(dir, testRootUUID); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "etc", "fstab"))
		if err != nil {
			t.Fatal(err)
		}
		header, rest, _ := strings.Cut(string(b), "\n")
		if !strings.HasPrefix(header, "#") || rest != c.want {
			t.Errorf("%s: fstab\n%s\nwant a comment and\n%s", c.name, b, c.want)
		}
	}
}

// An fstab that is a symbolic link is replaced, not written through.
func TestWriteFstabSymlink(t *testing.T) {
	dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "victim")
	os.WriteFile(outside, []byte("keep\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "etc"), 0o755)
	if err := os.Symlink(outside, filepath.Join(dir, "etc", "fstab")); err != nil {
		t.Fatal(err)
	}
	if err := writeFstab(dir, testRootUUID); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
		t.Errorf("written through the link: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "etc", "fstab")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("fstab is not a regular file: %v %v", fi, err)
	}
}

func TestExtlinuxConfig(t *testing.T) {
	got := extlinuxConfig("vmlinuz-6.1.0-9-amd64", "initrd.img-6.1.0-9-amd64", testRootUUID)
	for _, want := range []string{
		"KERNEL /boot/vmlinuz-6.1.0-9-amd64\n",
		"INITRD /boot/initrd.img-6.1.0-9-amd64\n",
		// ro until the init system has checked root and remounted it
		// read-write as fstab says.
		"APPEND root=UUID=" + testRootUUID + " ro console=tty0 console=ttyS0,115200\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("extlinux.conf lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(extlinuxConfig("vmlinuz", "", testRootUUID), "INITRD") {
		t.Error("INITRD without an initrd")
	}
}
