package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/testutil/diskimage"
)

// upload sends an image to boot-resources/ in one request. The test
// images are busybox, without cloud-init: deployed_at=local_boot makes
// their first boot from disk end the deployment.
func (s *site) upload(name, filetype, path string) {
	s.t.Helper()
	s.uploadAs(name, filetype, path, "local_boot")
}

// uploadAs is upload with deployed_at as given: "" for an image whose
// cloud-init reports that it is up.
func (s *site) uploadAs(name, filetype, path, deployedAt string) {
	s.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fields := map[string]string{"name": name, "architecture": "amd64/generic", "filetype": filetype,
		"sha256": hex.EncodeToString(sum[:]), "size": strconv.Itoa(len(data))}
	if deployedAt != "" {
		fields["deployed_at"] = deployedAt
	}
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("content", filetype)
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", "http://"+regionIP+":5240/MAAS/api/2.0/boot-resources/", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", agentapi.OAuthHeader(s.key))
	resp, err := s.cl.HTTP.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusCreated {
		s.t.Fatalf("upload %s: %d %s", name, resp.StatusCode, b)
	}
}

func countIn(path, text string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), text)
}

// TestDeployDriftRelease: a READY machine is deployed with a raw image the
// test builds; it writes the image, reboots through its BMC, is answered
// with a local boot and boots its disk, where the image prints the
// hostname and user data it got from Anvil. Its QEMU process is then killed
// behind Anvil's back: with drift policy enforce Anvil powers it back on
// and it boots its disk again; with warn it stays off and the drift is on
// the machine. Between the deployment and the drift it goes through
// rescue mode (rescueRoundTrip). Released with quick erase, its disk's start is wiped and it
// ends READY and off.
func TestDeployDriftRelease(t *testing.T) {
	t.Parallel() // its machine boots in a namespace of its own
	s := newSite(t, []string{"tapF0"}, nil, "--power-poll-interval", "3s", "--drift-grace", "10s")
	long := 6 * time.Minute
	img, _ := diskimage.Build(t)
	f := s.machineAt("vmF", "192.0.2.25", "02:00:00:00:00:25", "6f2c1f1e-0000-4000-8000-0000000000f1",
		[]string{"52:54:00:0e:00:f1"}, []string{"tapF0"}, 128)
	disk := s.disks["vmF"]

	form := s.ipmiParams(f)
	form.Set("hostname", "row-f-u1")
	var m apiMachine
	s.api("POST", "machines/", form, &m)
	s.waitStatus(m.SystemID, "Ready", long, f)
	s.waitFor("machine F to be off", 2*time.Minute, func() bool { return !f.Running() })
	s.upload("custom/e2e-raw", "ddraw", img)

	// Deploy.
	ud := "#cloud-config # anvil-e2e-42"
	clock := watchStages(f.Serial())
	t0 := time.Now()
	s.api("POST", "machines/"+m.SystemID+"/", url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"e2e-raw"},
		"hostname": {"web-f"}, "user_data": {base64.StdEncoding.EncodeToString([]byte(ud + "\nruncmd: []\n"))}}, nil)
	s.waitStatus(m.SystemID, "Deployed", long, f)
	clock.mark("deployed")
	t.Logf("op=deploy to DEPLOYED: %.1f s", time.Since(t0).Seconds())
	// The busybox image has no cloud-init: its upload set deployed_at=
	// local_boot, and the timeline says that is what ended the deployment.
	if evs := s.events(m.SystemID); !strings.Contains(evs, "deployed at local boot") {
		t.Fatalf("no \"deployed at local boot\" on the timeline:\n%s", evs)
	}
	marker := diskimage.Line("web-f", ud)
	s.waitSerial(f, "the deployed OS to print its settings", 3*time.Minute, func(out string) bool { return strings.Contains(out, marker) })
	clock.mark("os")
	t.Log(clock.report("op=deploy to the deployed OS", "firmware", "dhcp", "loader", "kernel", "agent", "done", "deployed", "os"))

	// Rescue mode: in with the owner's key, the disk read there, out to
	// the deployed OS again.
	s.rescueRoundTrip(m.SystemID, f, disk, marker)

	// Power drift, enforce: killed behind Anvil's back, powered back on.
	s.api("PUT", "machines/"+m.SystemID+"/", url.Values{"drift_policy": {"enforce"}}, nil)
	time.Sleep(12 * time.Second)          // past the grace of the deploy's last power action
	booted := countIn(f.Serial(), marker) // the line shows once or twice per boot (console and ttyS0 are one port)
	if err := f.Kill(); err != nil {
		t.Fatal(err)
	}
	s.waitFor("Anvil to power machine F back on", 2*time.Minute, func() bool { return f.Running() })
	s.waitSerial(f, "the deployed OS to boot again", 3*time.Minute, func(out string) bool { return strings.Count(out, marker) > booted })
	if ev := s.events(m.SystemID); !strings.Contains(strings.ToLower(ev), "drift") {
		t.Fatalf("no drift on the timeline:\n%s", ev)
	}

	// Power drift, warn: it stays off, and the machine says so.
	s.api("PUT", "machines/"+m.SystemID+"/", url.Values{"drift_policy": {"warn"}}, nil)
	time.Sleep(12 * time.Second)
	if err := f.Kill(); err != nil {
		t.Fatal(err)
	}
	var drifted struct {
		Drift    bool   `json:"power_drift"`
		Observed string `json:"power_state_observed"`
		Status   string `json:"status_name"`
	}
	s.waitFor("the drift to show on machine F", time.Minute, func() bool {
		s.api("GET", "machines/"+m.SystemID+"/", nil, &drifted)
		return drifted.Drift && drifted.Observed == "off"
	})
	time.Sleep(10 * time.Second)
	if f.Running() || drifted.Status != "Deployed" {
		t.Fatalf("warn powered the machine on (running=%v) or changed its status (%s)", f.Running(), drifted.Status)
	}

	// Release with quick erase.
	head := make([]byte, 1<<20)
	if fd, err := os.Open(disk); err == nil {
		io.ReadFull(fd, head)
		fd.Close()
	}
	if bytes.Count(head, []byte{0}) == len(head) {
		t.Fatal("the deployed disk's start is already zero")
	}
	s.api("POST", "machines/"+m.SystemID+"/", url.Values{"op": {"release"}, "erase": {"true"}, "quick_erase": {"true"}}, nil)
	s.waitStatus(m.SystemID, "Ready", long, f)
	s.waitFor("machine F to be off after the release", 2*time.Minute, func() bool { return !f.Running() })
	fd, err := os.Open(disk)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if _, err := io.ReadFull(fd, head); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(head, []byte{0}); n != len(head) {
		t.Fatalf("after a quick erase the disk's first MiB has %d non-zero bytes", len(head)-n)
	}
	fd.Close()

	// Deploy to memory on the same machine: the disk stays as it is.
	s.deployToMemory(m.SystemID, f, disk)
}

// deployVanishing deploys machine id with an image that is deleted once
// the deploy is accepted (a deploy naming a missing image is refused), so
// the install environment finds nothing to write and the phase fails.
func (s *site) deployVanishing(id string) {
	s.t.Helper()
	path := filepath.Join(s.t.TempDir(), "vanishing.raw")
	if err := os.WriteFile(path, bytes.Repeat([]byte{0}, 4096), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.upload("custom/vanishing", "ddraw", path)
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"vanishing"}}, nil)
	var rs []struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	s.api("GET", "boot-resources/", nil, &rs)
	for _, r := range rs {
		if r.Name == "custom/vanishing" || r.Name == "vanishing" {
			s.api("DELETE", "boot-resources/"+strconv.Itoa(r.ID)+"/", nil, nil)
		}
	}
}
