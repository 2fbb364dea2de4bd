package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/lab/ipmisim"
	"github.com/anvilmetal/anvil/internal/testutil/diskimage"
)

func fileSHA256(t interface{ Fatal(...any) }, path string) string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// deployToMemory deploys a Ready machine with ephemeral_deploy=true: the
// root filesystem tarball runs from memory and prints the settings of the
// seed it was given; the disk file is byte-identical before and after,
// through the release too (which erases nothing).
func (s *site) deployToMemory(id string, b *ipmisim.BMC, disk string) {
	t := s.t
	t.Helper()
	tgz, _ := diskimage.BuildRootfs(t)
	s.upload("custom/e2e-tgz", "tgz", tgz)
	before := fileSHA256(t, disk)

	ud := "#cloud-config # anvil-e2e-ram"
	t0 := time.Now()
	var m map[string]any
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"e2e-tgz"},
		"hostname": {"web-ram"}, "ephemeral_deploy": {"true"},
		"user_data": {base64.StdEncoding.EncodeToString([]byte(ud + "\nruncmd: []\n"))}}, &m)
	if m["ephemeral_deploy"] != true || m["status_name"] != "Deploying" {
		t.Fatalf("op=deploy ephemeral_deploy=true answered ephemeral_deploy=%v status %v", m["ephemeral_deploy"], m["status_name"])
	}
	s.waitStatus(id, "Deployed", 6*time.Minute, b)
	marker := diskimage.Line("web-ram", ud)
	s.waitSerial(b, "the image to run from memory with its seed", 3*time.Minute, func(out string) bool { return strings.Contains(out, marker) })
	t.Logf("op=deploy ephemeral_deploy=true to the image running from memory: %.1f s", time.Since(t0).Seconds())
	if serial, _ := os.ReadFile(b.Serial()); !strings.Contains(string(serial), "root filesystem booted as / (seed in /var/lib/cloud/seed/nocloud: yes)") {
		t.Fatalf("the image did not boot as its own root:\n%s", tail(serial, 4000))
	}
	s.api("GET", "machines/"+id+"/", nil, &m)
	if m["ephemeral_deploy"] != true {
		t.Fatalf("the deployed machine shows ephemeral_deploy=%v", m["ephemeral_deploy"])
	}
	if got := fileSHA256(t, disk); got != before {
		t.Fatalf("the disk changed during a deployment to memory: sha256 %s, was %s", got, before)
	}

	// Its release erases nothing, even when asked to.
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"release"}, "erase": {"true"}, "quick_erase": {"true"}}, nil)
	s.waitStatus(id, "Ready", 6*time.Minute, b)
	s.waitFor("the machine to be off after its release", 2*time.Minute, func() bool { return !b.Running() })
	if evs := s.events(id); !strings.Contains(evs, "no disk was written") {
		t.Fatalf("the release does not say why it erased nothing:\n%s", evs)
	}
	if got := fileSHA256(t, disk); got != before {
		t.Fatalf("the disk changed through the release of a deployment to memory: sha256 %s, was %s", got, before)
	}
	s.api("GET", "machines/"+id+"/", nil, &m)
	if m["ephemeral_deploy"] != false {
		t.Fatalf("a released machine shows ephemeral_deploy=%v", m["ephemeral_deploy"])
	}
}
