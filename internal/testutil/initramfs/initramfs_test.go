package initramfs

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCpioReadsIt: the archive unpacks with GNU cpio, a real peer.
func TestCpioReadsIt(t *testing.T) {
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("cpio not installed")
	}
	var buf bytes.Buffer
	err := Write(&buf, map[string]File{
		"etc": {Dir: true, Mode: 0o755}, "etc/hello": {Mode: 0o644, Data: []byte("hi\n")}, "init": {Mode: 0o755, Data: []byte("#!/bin/sh\n")},
		"link": {Link: "etc/hello"},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", "gzip -dc | cpio -idm --quiet")
	cmd.Dir, cmd.Stdin = dir, &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio: %v %s", err, out)
	}
	out, err := exec.Command("cat", filepath.Join(dir, "link")).Output()
	if err != nil || strings.TrimSpace(string(out)) != "hi" {
		t.Fatalf("unpacked link reads %q %v", out, err)
	}
}
