package ui

import (
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
)

func fleetRows() []row {
	mk := func(host string, st machine.Status, pw machine.PowerState, owner, zone string, cpu int, fails int, drift bool, tags ...string) row {
		m := machine.Machine{SystemID: "id-" + host, Hostname: host, Status: st, PowerState: pw, Owner: owner, Zone: zone, Pool: "default",
			CPUCount: cpu, Tags: tags, Interfaces: []machine.Interface{{MAC: "52:54:00:00:00:" + host[len(host)-2:]}}}
		m.Watch.Failures, m.Watch.Drift = fails, drift
		return rowOf(&m, nil)
	}
	return []row{
		mk("web-01", machine.Ready, machine.PowerOff, "", "row-a", 8, 0, false, "web"),
		mk("web-02", machine.Deployed, machine.PowerOn, "alice", "row-a", 16, 0, true, "web"),
		mk("db-03", machine.Deployed, machine.PowerOn, "bob", "row-b", 32, 2, false, "db"),
		mk("db-04", machine.New, machine.PowerUnknown, "", "row-b", 0, 0, false),
		mk("gpu-05", machine.FailedCommissioning, machine.PowerOff, "", "row-c", 64, 0, false, "gpu"),
	}
}

// testFleet is a fleet holding fleetRows.
func testFleet() *fleet {
	f := newFleet(nil, nil)
	for _, r := range fleetRows() {
		f.rows[r.SystemID] = &r
	}
	return f
}

func hosts(p listPage) []string {
	var out []string
	for _, r := range p.Rows {
		out = append(out, r.Hostname)
	}
	return out
}

func TestListQuery(t *testing.T) {
	for _, tc := range []struct {
		query   string
		want    []string
		matched int
		pages   int
	}{
		{"", []string{"db-03", "db-04", "gpu-05", "web-01", "web-02"}, 5, 1},
		{"q=WEB", []string{"web-01", "web-02"}, 2, 1},
		{"q=52:54:00:00:00:04", []string{"db-04"}, 1, 1},
		{"q=gpu", []string{"gpu-05"}, 1, 1},   // a tag
		{"q=alice", []string{"web-02"}, 1, 1}, // an owner
		{"status=deployed", []string{"db-03", "web-02"}, 2, 1},
		{"status=deployed&status=new", []string{"db-03", "db-04", "web-02"}, 3, 1},
		{"status=failed_commissioning", []string{"gpu-05"}, 1, 1},
		{"zone=row-b", []string{"db-03", "db-04"}, 2, 1},
		{"power=on&zone=row-a", []string{"web-02"}, 1, 1},
		{"power=error", []string{"db-03"}, 1, 1},
		{"drift=1", []string{"web-02"}, 1, 1},
		{"sort=cpu&dir=desc", []string{"gpu-05", "db-03", "web-02", "web-01", "db-04"}, 5, 1},
		{"sort=cpu", []string{"db-04", "web-01", "web-02", "db-03", "gpu-05"}, 5, 1},
		{"per_page=2", []string{"db-03", "db-04"}, 5, 3},
		{"per_page=2&page=3", []string{"web-02"}, 5, 3},
		{"per_page=2&page=99", []string{"web-02"}, 5, 3}, // past the end: the last page
		{"q=nothing-matches", nil, 0, 1},
	} {
		t.Run(tc.query, func(t *testing.T) {
			v, _ := url.ParseQuery(tc.query)
			q, problems := parseList(v)
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			f := testFleet()
			p := q.apply(f.ordered(q.Sort), machine.Actor{Admin: true})
			if got := hosts(p); !slices.Equal(got, tc.want) || p.Matched != tc.matched || p.Pages != tc.pages || p.Total != 5 {
				t.Fatalf("rows %v matched %d pages %d total %d; want %v, %d, %d", got, p.Matched, p.Pages, p.Total, tc.want, tc.matched, tc.pages)
			}
		})
	}
}

// Non-admins see free machines and their own, as through the API.
func TestListVisibility(t *testing.T) {
	f := testFleet()
	q, _ := parseList(url.Values{})
	p := q.apply(f.ordered(q.Sort), machine.Actor{Name: "alice"})
	if got := hosts(p); !slices.Equal(got, []string{"db-04", "gpu-05", "web-01", "web-02"}) || p.Total != 4 {
		t.Fatalf("alice sees %v (total %d)", got, p.Total)
	}
}

func TestListQueryProblems(t *testing.T) {
	v, _ := url.ParseQuery("status=nonsense&power=sideways&sort=colour&per_page=100000")
	q, problems := parseList(v)
	if len(problems) != 3 {
		t.Fatalf("problems %v; want one each for status, power and sort", problems)
	}
	if q.Sort != "hostname" || q.Power != "" || len(q.Statuses) != 0 || q.PerPage != maxPerPage {
		t.Fatalf("query %+v", q)
	}
}

// A query string read and written again asks for the same view.
func TestListQueryRoundTrip(t *testing.T) {
	in := "q=web&status=ready&status=deployed&zone=row-a&pool=p&owner=alice&power=on&drift=1&sort=cpu&dir=desc&page=2&per_page=20"
	v, _ := url.ParseQuery(in)
	q, _ := parseList(v)
	again, _ := parseList(q.values())
	if fmt.Sprint(q) != fmt.Sprint(again) {
		t.Fatalf("%+v became %+v", q, again)
	}
}

func TestSampleOf(t *testing.T) {
	rows := testFleet().ordered("hostname")
	s := sampleOf(rows[0].ReadAt, rows, func(string) bool { return true })
	if s.ByStatus[machine.Deployed] != 2 || s.ByStatus[machine.New] != 1 || s.Drifting != 1 || s.BMCFailing != 1 {
		t.Fatalf("sample %+v", s)
	}
	h := newHistory(3)
	for range 5 {
		h.add(s)
	}
	if len(h.samples()) != 3 {
		t.Fatalf("history keeps %d samples, want 3", len(h.samples()))
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/MAAS/machine/abc":      "/MAAS/machine/abc",
		"/MAAS/machines?q=x":     "/MAAS/machines?q=x",
		"":                       "/MAAS/machines",
		"https://evil.example/":  "/MAAS/machines",
		"//evil.example/MAAS/":   "/MAAS/machines",
		"/MAAS/\\evil":           "/MAAS/machines",
		"/MAAS/login?next=/x":    "/MAAS/machines",
		"/MAAS/api/2.0/machines": "/MAAS/machines",
		"/other":                 "/MAAS/machines",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRowLooksLike(t *testing.T) {
	rs := fleetRows()
	a, b := rs[1], rs[1]
	b.Version, b.ReadAt = a.Version+1, a.ReadAt.Add(time.Minute)
	if !a.looksLike(&b) {
		t.Fatal("a new power reading time makes the row look different")
	}
	b.Power = machine.PowerOff
	if a.looksLike(&b) {
		t.Fatal("a power change does not make the row look different")
	}
	c := rs[1]
	c.Tags = append([]string{"new"}, c.Tags...)
	if a.looksLike(&c) {
		t.Fatal("a new tag does not make the row look different")
	}
}
