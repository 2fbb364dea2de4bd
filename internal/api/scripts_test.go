package api_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

const uploadedScript = `#!/bin/sh
# --- Start MAAS 1.0 script metadata ---
# name: disk-speed
# title: Disk speed
# tags: [storage, quick]
# script_type: testing
# hardware_type: storage
# parallel: instance
# timeout: 90
# parameters:
#   disk: {type: storage, argument_format: '{path}'}
# --- End MAAS 1.0 script metadata ---
echo "testing $1"
`

type apiScript struct {
	ID           int64          `json:"id"`
	Name         string         `json:"name"`
	Title        string         `json:"title"`
	Tags         []string       `json:"tags"`
	Type         int            `json:"type"`
	TypeName     string         `json:"type_name"`
	HardwareType int            `json:"hardware_type"`
	Timeout      string         `json:"timeout"`
	Default      bool           `json:"default"`
	Parameters   map[string]any `json:"parameters"`
	History      []struct {
		ID      int64  `json:"id"`
		Comment string `json:"comment"`
		Data    string `json:"data"`
	} `json:"history"`
}

// TestScriptsAPI uploads a script as the maas CLI does (script@=FILE),
// reads it with filters, updates it into a second revision, downloads
// either, reverts, retags and deletes it; shipped scripts are listed and
// refuse deletion; broken metadata is a 400 in MAAS's words with nothing
// stored.
func TestScriptsAPI(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		a := e.mustCLI(200, http.MethodPost, "scripts/", e.admin, cliBody(
			cliPart{name: "script", file: "disk-speed.sh", value: uploadedScript},
			cliPart{name: "comment", value: "first"}))
		var sc apiScript
		if err := json.Unmarshal(a.body, &sc); err != nil {
			t.Fatal(err)
		}
		if sc.Name != "disk-speed" || sc.Type != 2 || sc.TypeName != "Testing script" || sc.HardwareType != 3 ||
			sc.Timeout != "0:01:30" || len(sc.History) != 1 || sc.History[0].Comment != "first" || sc.Parameters["disk"] == nil {
			t.Fatalf("created %+v", sc)
		}
		// Not for non-administrators.
		if a := e.cli(http.MethodPost, "scripts/", e.user, cliBody(cliPart{name: "script", file: "x", value: "#!/bin/sh\n"}, cliPart{name: "name", value: "x"})); a.code != 403 {
			t.Fatalf("non-admin create: %d %s", a.code, a.body)
		}

		var list []apiScript
		e.must(200, http.MethodGet, "scripts/", e.user, url.Values{"type": {"testing"}, "filters": {"quick"}}, &list)
		if len(list) != 1 || list[0].Name != "disk-speed" {
			t.Fatalf("filtered list %+v", list)
		}
		e.must(200, http.MethodGet, "scripts/", e.user, url.Values{"type": {"commissioning"}}, &list)
		names := map[string]bool{}
		for _, s := range list {
			names[s.Name] = s.Default
		}
		if !names["00-maas-01-lshw"] || !names["50-maas-01-commissioning"] || len(names) != 2 {
			t.Fatalf("commissioning scripts %v", names)
		}
		if code, b := e.call(http.MethodGet, "scripts/", e.user, url.Values{"hardware_type": {"toaster"}}); code != 400 || !strings.Contains(string(b), "Hardware type must be node, cpu, memory, storage, or gpu") {
			t.Fatalf("bad hardware_type filter: %d %s", code, b)
		}

		// A new revision; the operator's tags survive it.
		e.mustCLI(200, http.MethodPost, "scripts/disk-speed?op=add_tag", e.admin, cliBody(cliPart{name: "tag", value: "mine"}))
		v2 := strings.Replace(uploadedScript, "testing $1", "testing again $1", 1)
		a = e.mustCLI(200, http.MethodPut, "scripts/disk-speed", e.admin, cliBody(
			cliPart{name: "script", file: "x.sh", value: v2}, cliPart{name: "comment", value: "second"}))
		json.Unmarshal(a.body, &sc)
		if len(sc.History) != 2 || sc.History[0].Comment != "second" || !slices.Contains(sc.Tags, "mine") {
			t.Fatalf("updated %+v", sc)
		}
		first := sc.History[1].ID
		if code, b := e.call(http.MethodGet, "scripts/disk-speed", e.user, url.Values{"op": {"download"}}); code != 200 || string(b) != v2 {
			t.Fatalf("download: %d %q", code, b)
		}
		if code, b := e.call(http.MethodGet, "scripts/disk-speed", e.user, url.Values{"op": {"download"}, "rev": {itoa(first)}}); code != 200 || string(b) != uploadedScript {
			t.Fatalf("download rev: %d %q", code, b)
		}
		e.must(200, http.MethodGet, "scripts/"+itoa(sc.ID), e.user, url.Values{"include_script": {"1"}}, &sc)
		if d, _ := base64.StdEncoding.DecodeString(sc.History[0].Data); string(d) != v2 {
			t.Fatalf("include_script: %q", d)
		}
		if code, b := e.call(http.MethodPost, "scripts/disk-speed", e.admin, url.Values{"op": {"revert"}, "to": {"-5"}}); code != 400 || string(b) != "Goes too far back." {
			t.Fatalf("revert too far: %d %s", code, b)
		}
		e.must(200, http.MethodPost, "scripts/disk-speed", e.admin, url.Values{"op": {"revert"}, "to": {"-1"}}, &sc)
		if len(sc.History) != 1 || sc.History[0].ID != first {
			t.Fatalf("reverted %+v", sc)
		}
		e.must(200, http.MethodPost, "scripts/disk-speed", e.admin, url.Values{"op": {"remove_tag"}, "tag": {"quick"}}, &sc)
		if slices.Contains(sc.Tags, "quick") {
			t.Fatalf("tags %v", sc.Tags)
		}

		// Bad input: each a 400 in MAAS's words, nothing stored.
		for _, c := range []struct {
			parts []cliPart
			want  string
		}{
			{[]cliPart{{name: "name", value: "x"}, {name: "script", file: "x", value: "echo no shebang\n"}}, `{"script":["Must start with shebang."]}`},
			{[]cliPart{{name: "name", value: "x"}, {name: "hardware_type", value: "toaster"}, {name: "script", file: "x", value: "#!/bin/sh\n"}}, `"Hardware type must be node, cpu, memory, storage, or gpu"`},
			{[]cliPart{{name: "name", value: "other"}, {name: "script", file: "x", value: uploadedScript}}, `"May not override values defined in embedded YAML."`},
			{[]cliPart{{name: "script", file: "x", value: "#!/bin/sh\n# --- Start MAAS 1.0 script metadata ---\n# name: [broken\n# --- End MAAS 1.0 script metadata ---\n"}}, `Invalid YAML`},
			{[]cliPart{{name: "script", file: "x", value: strings.Replace(uploadedScript, "disk-speed", "disk-speed2", 1) + ""}, {name: "type", value: "commissioning"}}, `"May not override values defined in embedded YAML."`},
			{[]cliPart{{name: "script", file: "x", value: uploadedScript}}, `"Script with this Name already exists."`},
		} {
			a := e.cli(http.MethodPost, "scripts/", e.admin, cliBody(c.parts...))
			if a.code != 400 || !strings.Contains(string(a.body), c.want) {
				t.Errorf("%v: %d %s, want 400 with %s", c.parts[0], a.code, a.body, c.want)
			}
		}
		e.must(200, http.MethodGet, "scripts/", e.admin, url.Values{"type": {"testing"}}, &list)
		for _, s := range list {
			if s.Name == "x" || s.Name == "other" || s.Name == "disk-speed2" {
				t.Errorf("a refused script was stored: %s", s.Name)
			}
		}

		// Shipped scripts: listed as default, only tags and timeout change, never deleted.
		if code, b := e.call(http.MethodDelete, "scripts/smartctl-validate", e.admin, nil); code != 400 || string(b) != "Unable to delete default script" {
			t.Fatalf("delete default: %d %q", code, b)
		}
		if code, b := e.call(http.MethodPut, "scripts/smartctl-validate", e.admin, url.Values{"title": {"mine"}}); code != 400 || !strings.Contains(string(b), "Not allowed to change on default scripts.") {
			t.Fatalf("retitle default: %d %s", code, b)
		}
		e.must(200, http.MethodPut, "scripts/smartctl-validate", e.admin, url.Values{"timeout": {"600"}}, &sc)
		if sc.Timeout != "0:10:00" || !sc.Default {
			t.Fatalf("default timeout %+v", sc)
		}

		e.must(204, http.MethodDelete, "scripts/disk-speed", e.admin, nil, nil)
		if code, b := e.call(http.MethodGet, "scripts/disk-speed", e.user, nil); code != 404 || string(b) != "No Script matches the given query." {
			t.Fatalf("deleted: %d %s", code, b)
		}
	})
}
