package ui_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/store"
)

// Script results appear on the machine page with their status and
// runtime, each with a page of its output; the scripts page lists the
// scripts and offers an upload to admins. The rescue button is the
// lifecycle's.
func TestScriptsAndResults(t *testing.T) { eachDB(t, testScriptsAndResults, nil) }

func testScriptsAndResults(t *testing.T, s *site) {
	c, csrf, id := s.asAda("tests-1", 4)
	ctx := context.Background()
	exit := 1
	rid := s.scriptResult(id, scripts.Testing, store.ScriptResult{Name: "smartctl-validate", HardwareType: scripts.Storage, Instance: "sda",
		Status: scripts.Failed, ExitStatus: &exit, Output: []byte("SMART overall-health self-assessment test result: FAILED <b>\n")}, 1500*time.Millisecond)
	page := s.page(c, "/MAAS/machine/"+id)
	mustContain(t, page, `id="results"`, "testing", fmt.Sprintf(`href="/MAAS/machine/%s/results/%d"`, id, rid), "smartctl-validate", "sda", "Failed", "1.5s")
	page = s.page(c, fmt.Sprintf("/MAAS/machine/%s/results/%d", id, rid))
	mustContain(t, page, "self-assessment test result: FAILED &lt;b&gt;", `id="result-status">Failed`, "1.5s")
	for _, p := range []string{"/MAAS/machine/" + id + "/results/999999", "/MAAS/machine/nosuch/results/1"} {
		if code, _, _ := s.do(c, "GET", p, nil, nil); code != http.StatusNotFound {
			t.Fatalf("GET %s: %d", p, code)
		}
	}
	if code, _, _ := s.do(c, "GET", "/MAAS/machine/"+id+"/results/x", nil, nil); code != http.StatusBadRequest {
		t.Fatalf("a result id that is no number: %d", code)
	}

	page = s.page(c, "/MAAS/scripts")
	mustContain(t, page, `id="script-smartctl-validate"`, "shipped", `id="upload-script"`)
	// What the upload form sends: a multipart body with the file as
	// "script". A second script of the same name is refused in words.
	up := func(name, text string) (int, string) {
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		_ = w.WriteField("name", name)
		_ = w.WriteField("type", "testing")
		f, _ := w.CreateFormFile("script", name+".sh")
		_, _ = f.Write([]byte(text))
		_ = w.Close()
		req, _ := http.NewRequest("POST", s.base+"/MAAS/api/2.0/scripts/", &body)
		req.Header.Set("Content-Type", w.FormDataContentType())
		req.Header.Set("X-CSRFToken", csrf)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(out)
	}
	if code, out := up("disk-check", "#!/bin/sh\n# --- Start MAAS 1.0 script metadata ---\n# hardware_type: storage\n# timeout: 00:05:00\n# --- End MAAS 1.0 script metadata ---\necho ok\n"); code != http.StatusOK {
		t.Fatalf("upload: %d %s", code, out)
	}
	if code, out := up("disk-check", "#!/bin/sh\necho again\n"); code != http.StatusBadRequest || !strings.Contains(out, "Script with this Name already exists.") {
		t.Fatalf("a second disk-check: %d %s", code, out)
	}
	mustContain(t, s.page(c, "/MAAS/scripts"), `id="script-disk-check"`, "<td>testing</td><td>Storage</td>", "5m0s")

	// Rescue mode is offered as the lifecycle allows, and taken through
	// the machine's ops.
	mustContain(t, s.page(c, "/MAAS/machine/"+id+"/actions"), `id="act-rescue_mode"`)
	s.mustDo(c, "POST", "/MAAS/api/2.0/machines/"+id+"/?op=rescue_mode", url.Values{}, csrf, http.StatusOK)
	if _, err := s.srv.Store.UpdateMachine(ctx, id, func(m *machine.Machine) ([]machine.Event, error) {
		m.Status = machine.RescueMode // the environment booted and reported
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	acts := s.page(c, "/MAAS/machine/"+id+"/actions")
	mustContain(t, acts, `id="act-exit_rescue_mode"`)
	mustLack(t, acts, `id="act-rescue_mode"`)

	// A non-admin sees a machine another user holds nowhere: not its
	// results either. It sees the scripts without the upload.
	if _, err := s.srv.Store.UpdateMachine(ctx, id, func(m *machine.Machine) ([]machine.Event, error) {
		m.Owner = "ada"
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	bob, bobCSRF := s.asBob()
	if code, _, _ := s.do(bob, "GET", fmt.Sprintf("/MAAS/machine/%s/results/%d", id, rid), nil, nil); code != http.StatusNotFound {
		t.Fatalf("bob reads ada's machine's result: %d", code)
	}
	page = s.page(bob, "/MAAS/scripts")
	mustContain(t, page, "smartctl-validate")
	mustLack(t, page, `id="upload-script"`)
	s.mustDo(bob, "POST", "/MAAS/api/2.0/scripts/", url.Values{"name": {"x"}, "script": {"#!/bin/sh\necho hi\n"}}, bobCSRF, http.StatusForbidden)
}
