package api_test

import (
	"net/url"
	"testing"
)

// TestListNeverStale: the list answers from a render cache; every kind of
// change must show in the next list all the same.
func TestListNeverStale(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		m := e.addMachine("fresh", "52:54:00:00:06:01", nil)
		list := func() apiMachine {
			t.Helper()
			var ms []apiMachine
			e.must(200, "GET", "machines/", e.admin, nil, &ms)
			if len(ms) != 1 {
				t.Fatalf("%d machines listed", len(ms))
			}
			return ms[0]
		}
		list() // warm the cache
		e.must(200, "PUT", "machines/"+m.SystemID+"/", e.admin, url.Values{"hostname": {"renamed"}}, nil)
		if got := list(); got.Hostname != "renamed" {
			t.Fatalf("after PUT the list shows %q", got.Hostname)
		}
		e.must(200, "POST", "tags/", e.admin, url.Values{"name": {"t1"}}, nil)
		e.must(200, "POST", "tags/t1/?op=update_nodes", e.admin, url.Values{"add": {m.SystemID}}, nil)
		if got := list(); len(got.TagNames) != 1 || got.TagNames[0] != "t1" {
			t.Fatalf("after tagging the list shows tags %v", got.TagNames)
		}
		e.must(200, "PUT", "tags/t1/", e.admin, url.Values{"name": {"t2"}}, nil)
		if got := list(); len(got.TagNames) != 1 || got.TagNames[0] != "t2" {
			t.Fatalf("after renaming the tag the list shows %v", got.TagNames)
		}
		e.must(200, "POST", "zones/", e.admin, url.Values{"name": {"z1"}}, nil)
		e.must(200, "PUT", "machines/"+m.SystemID+"/", e.admin, url.Values{"zone": {"z1"}}, nil)
		e.must(200, "PUT", "zones/z1/", e.admin, url.Values{"name": {"z2"}}, nil)
		if got := list(); got.Zone.Name != "z2" {
			t.Fatalf("after renaming the zone the list shows %q", got.Zone.Name)
		}
		e.must(200, "POST", "machines/"+m.SystemID+"/?op=mark_broken", e.admin, nil, nil)
		if got := list(); got.StatusName != "Broken" {
			t.Fatalf("after mark_broken the list shows %q", got.StatusName)
		}
		e.must(204, "DELETE", "machines/"+m.SystemID+"/", e.admin, nil, nil)
		var ms []apiMachine
		e.must(200, "GET", "machines/", e.admin, nil, &ms)
		if len(ms) != 0 {
			t.Fatalf("deleted machine still listed")
		}
	})
}
