package api_test

import (
	"encoding/json"
	"net/url"
	"testing"
)

// TestTagNodeTypes: a tag's nodes, machines, devices and controllers as
// the maas CLI asks for them, and rebuild answered as MAAS answers a tag without a definition.
func TestTagNodeTypes(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		a := e.addMachine("node-a", "52:54:00:00:04:0a", nil)
		e.must(200, "POST", "tags/", e.admin, url.Values{"name": {"fast"}}, nil)
		e.mustCLI(200, "POST", "tags/fast/?op=update_nodes", e.admin, cliBody(cliPart{name: "add", value: a.SystemID}))
		for _, c := range []struct {
			op   string
			want int
		}{{"nodes", 1}, {"machines", 1}, {"devices", 0}, {"rack_controllers", 0}, {"region_controllers", 0}} {
			var got []apiMachine
			if err := json.Unmarshal(e.mustCLI(200, "GET", "tags/fast/?op="+c.op, e.admin, nil).body, &got); err != nil || len(got) != c.want {
				t.Errorf("%s: %d (%v), want %d", c.op, len(got), err, c.want)
			}
			if c.want == 1 && got[0].SystemID != a.SystemID {
				t.Errorf("%s: %+v", c.op, got)
			}
		}
		got := e.mustCLI(200, "POST", "tags/fast/?op=rebuild", e.admin, cliBody())
		var rb map[string]string
		if err := json.Unmarshal(got.body, &rb); err != nil || len(rb) != 1 || rb["rebuilding"] != "fast" {
			t.Fatalf("rebuild: %s", got.body)
		}
		if got := e.cli("POST", "tags/fast/?op=rebuild", e.user, cliBody()); got.code != 403 {
			t.Fatalf("rebuild by a user: %d", got.code)
		}
		if m := e.machine(a.SystemID); len(m.TagNames) != 1 {
			t.Fatalf("rebuild changed the tag's machines: %v", m.TagNames)
		}
	})
}
