package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// uploadImage uploads a small raw image under name for arch.
func (e *env) uploadImage(name, arch string) {
	e.t.Helper()
	img := []byte(strings.Repeat("image "+name+" ", 100))
	sum := sha256.Sum256(img)
	if code, body := e.upload(e.admin, url.Values{"name": {name}, "architecture": {arch}, "filetype": {"ddraw"},
		"sha256": {hex.EncodeToString(sum[:])}, "size": {strconv.Itoa(len(img))}}, img); code != http.StatusCreated {
		e.t.Fatalf("upload %s: %d %s", name, code, body)
	}
}

// defaultImage uploads the image a deploy naming none takes
// (ubuntu/noble for amd64), once per server.
func (e *env) defaultImage() {
	e.t.Helper()
	rs, err := e.srv.Store.ListBootResources(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range rs {
		if r.Name == "ubuntu/noble" {
			return
		}
	}
	e.uploadImage("ubuntu/noble", "amd64/generic")
}

// TestDeployRefusesMissingImage deploys images that are not uploaded for
// the machine's architecture, named and by default: each is a 400 on
// distro_series listing the images that are, and the machine stays Ready
// with nothing of the deploy stored.
func TestDeployRefusesMissingImage(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		id := e.readyMachine("web-1", "52:54:00:d1:00:01")
		deploy := func(key string, f url.Values) (int, string) {
			f.Set("op", "deploy")
			code, body := e.call(http.MethodPost, "machines/"+id+"/", key, f)
			return code, string(body)
		}
		refused := func(code int, body string, want ...string) {
			t.Helper()
			var fields map[string][]string
			if code != http.StatusBadRequest || json.Unmarshal([]byte(body), &fields) != nil || len(fields["distro_series"]) != 1 {
				t.Fatalf("deploy answered %d %s; want 400 with a distro_series error", code, body)
			}
			for _, w := range want {
				if !strings.Contains(fields["distro_series"][0], w) {
					t.Errorf("refusal %q lacks %q", fields["distro_series"][0], w)
				}
			}
			if m, _ := e.srv.Store.GetMachine(t.Context(), id); m.Status.String() != "Ready" || m.Owner != "" || m.OSystem != "" {
				t.Fatalf("after a refused deploy: %s owner %q os %q", m.Status, m.Owner, m.OSystem)
			}
		}

		code, body := deploy(e.admin, url.Values{})
		refused(code, body, "the default ubuntu/noble (none was named)", "there is none for amd64")

		e.uploadImage("custom/debian-12", "amd64/generic")
		e.uploadImage("custom/arm-only", "arm64/generic")
		code, body = deploy(e.admin, url.Values{})
		refused(code, body, "ubuntu/noble", "uploaded for amd64: custom/debian-12 (")
		if strings.Contains(body, "arm-only") {
			t.Errorf("an arm64 image offered for an amd64 machine: %s", body)
		}
		code, body = deploy(e.user, url.Values{"osystem": {"custom"}, "distro_series": {"nosuch"}})
		refused(code, body, "no image custom/nosuch is uploaded for amd64", "custom/debian-12")
		code, body = deploy(e.admin, url.Values{"osystem": {"custom"}, "distro_series": {"arm-only"}})
		refused(code, body, "custom/arm-only", "custom/debian-12")

		lastDeployed := func(name string) any {
			t.Helper()
			var rs []map[string]any
			e.must(http.StatusOK, http.MethodGet, "boot-resources/", e.user, nil, &rs)
			for _, r := range rs {
				if r["name"] == name {
					return r["last_deployed"]
				}
			}
			t.Fatalf("no boot resource %s in %v", name, rs)
			return nil
		}
		if got := lastDeployed("debian-12"); got != nil {
			t.Fatalf("last_deployed %v before any deploy", got)
		}

		// Accepted; the machine's power is manual, and the answer says
		// what the operator must do now.
		before := time.Now().Add(-time.Second)
		code, body = deploy(e.admin, url.Values{"osystem": {"custom"}, "distro_series": {"debian-12"}})
		var m apiMachine
		if code != http.StatusOK || json.Unmarshal([]byte(body), &m) != nil {
			t.Fatalf("deploy of an uploaded image: %d %s", code, body)
		}
		if m.StatusName != "Deploying" || m.PowerType != "manual" || !strings.Contains(m.StatusMsg, "power it on now") {
			t.Fatalf("deploy answered %s (%s), power %s; want Deploying and \"power it on now\"", m.StatusName, m.StatusMsg, m.PowerType)
		}
		if ts, _ := lastDeployed("debian-12").(string); ts == "" {
			t.Errorf("last_deployed not set after a deploy")
		} else if at, err := time.Parse(time.RFC3339, ts); err != nil || at.Before(before.Truncate(time.Second)) || at.After(time.Now()) {
			t.Errorf("last_deployed %q (%v), want about now", ts, err)
		}
		if got := lastDeployed("arm-only"); got != nil {
			t.Errorf("last_deployed %v on an image nobody deployed", got)
		}
		if !e.hasEvent(id, "Power needed") {
			t.Errorf("no \"Power needed\" event on the manual machine's timeline")
		}
	})
}
