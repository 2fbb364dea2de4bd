package cli_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// addMachine enlists a machine through the CLI and returns its system id.
func (e *e2e) addMachine(hostname, mac string) string {
	e.t.Helper()
	var m cliMachine
	out := e.ok("machine", "add", "--hostname", hostname, "--mac", mac, "--arch", "amd64/generic", "--power-type", "manual", "--json")
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.SystemID == "" {
		e.t.Fatalf("machine add %s: %v\n%s", hostname, err, out)
	}
	return m.SystemID
}

func (e *e2e) tagsOf(id string) []string {
	e.t.Helper()
	m, err := e.srv.Store.GetMachine(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return m.Tags
}

// TestE2ETags creates a tag, tags machines by hostname and system id,
// untags one and deletes the tag, against a real server; a bad name, an
// unknown machine and an unknown tag are refused in words and change
// nothing.
func TestE2ETags(t *testing.T) {
	eachDB(t, func(t *testing.T, e *e2e) {
		e.login()
		id1, id2 := e.addMachine("web-1", "52:54:00:e2:7a:01"), e.addMachine("web-2", "52:54:00:e2:7a:02")

		if out := e.ok("tags", "create", "web", "--comment", "web servers", "--kernel-opts", "console=ttyS0"); out != "Created tag web.\n" {
			t.Errorf("tags create printed %q", out)
		}
		e.fails([]string{"tags", "create", "bad name!"}, "400 Bad Request", "name")
		e.fails([]string{"tags", "create", "web"}, "409 Conflict")
		if out := e.ok("tags", "list"); !strings.HasPrefix(out, "NAME ") || lineWith(out, "web", "web servers", "console=ttyS0") == "" {
			t.Errorf("tags list:\n%s", out)
		}

		if out := e.ok("tags", "add", "web", "web-1", id2); out != "Tagged web: web-1 ("+id1+"), web-2 ("+id2+").\n" {
			t.Errorf("tags add printed %q", out)
		}
		// An unknown machine stops the whole command before the server
		// tags anything; so does an unknown tag.
		e.ok("tags", "create", "db")
		e.fails([]string{"tags", "add", "db", "web-1", "nosuch"}, `no machine has system id or hostname "nosuch"`)
		e.fails([]string{"tags", "add", "nosuch", "web-1"}, "404 Not Found")
		if got := e.tagsOf(id1); !slices.Equal(got, []string{"web"}) {
			t.Errorf("web-1's tags after refused adds: %v", got)
		}
		if ms := e.listJSON(); len(ms) != 2 {
			t.Fatalf("machines: %+v", ms)
		}
		if out := e.ok("machines", "list"); lineWith(out, "web-2", "web") == "" {
			t.Errorf("machines list does not show web-2's tag:\n%s", out)
		}

		if out := e.ok("tags", "remove", "web", "web-2"); out != "Untagged web: web-2 ("+id2+").\n" {
			t.Errorf("tags remove printed %q", out)
		}
		if got1, got2 := e.tagsOf(id1), e.tagsOf(id2); !slices.Equal(got1, []string{"web"}) || len(got2) != 0 {
			t.Errorf("tags after remove: web-1 %v, web-2 %v", got1, got2)
		}
		e.fails([]string{"tags", "remove", "web"}, "requires at least 2 arg(s)")

		if out := e.ok("tags", "delete", "web"); out != "Deleted tag web.\n" {
			t.Errorf("tags delete printed %q", out)
		}
		e.fails([]string{"tags", "delete", "web"}, "404 Not Found")
		if got := e.tagsOf(id1); len(got) != 0 {
			t.Errorf("web-1 keeps a deleted tag: %v", got)
		}
	})
}

// TestE2EZonesAndPools creates, lists and deletes a zone and a pool; the
// default ones and unknown names are refused.
func TestE2EZonesAndPools(t *testing.T) {
	eachDB(t, func(t *testing.T, e *e2e) {
		e.login()
		for _, kind := range []struct{ cmd, noun string }{{"zones", "zone"}, {"pools", "resource pool"}} {
			out := e.ok(kind.cmd, "create", "row-a", "--description", "Row A, rack 3")
			m := regexp.MustCompile(`^Created ` + kind.noun + ` row-a \(id (\d+)\)\.\n$`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("%s create printed %q", kind.cmd, out)
			}
			e.ok(kind.cmd, "create", "row-b")
			e.fails([]string{kind.cmd, "create", "row a"}, "400 Bad Request", "name")
			e.fails([]string{kind.cmd, "create", "row-a"}, "409 Conflict")
			out = e.ok(kind.cmd, "list")
			if !strings.HasPrefix(out, "ID ") || lineWith(out, m[1], "row-a", "Row A, rack 3") == "" || lineWith(out, "default") == "" {
				t.Errorf("%s list:\n%s", kind.cmd, out)
			}
			var listed []map[string]any
			if err := json.Unmarshal([]byte(e.ok(kind.cmd, "list", "--json")), &listed); err != nil || len(listed) != 3 {
				t.Errorf("%s list --json: %v %v", kind.cmd, listed, err)
			}

			if out := e.ok(kind.cmd, "delete", "row-a"); out != "Deleted "+kind.noun+" row-a.\n" {
				t.Errorf("%s delete printed %q", kind.cmd, out)
			}
			e.fails([]string{kind.cmd, "delete", "row-a"}, `no `+kind.noun+` "row-a"`)
			e.fails([]string{kind.cmd, "delete", "default"}, "default", "cannot be deleted")
		}
		// A machine in a pool keeps it from being deleted.
		e.ok("machine", "add", "--hostname", "db-1", "--mac", "52:54:00:e2:7b:01", "--pool", "row-b", "--zone", "row-b")
		e.fails([]string{"pools", "delete", "row-b"}, "holds 1 machine")
		e.fails([]string{"zones", "delete", "row-b"}, "holds 1 machine")
		zs, err := e.srv.Store.ListZones(context.Background())
		if err != nil || len(zs) != 2 {
			t.Errorf("zones left: %+v %v", zs, err)
		}
	})
}
