package ui

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
)

// listQuery is the machine list's filter, sort and page, read from the
// query string so that a view can be bookmarked and the live refresh asks
// for exactly what the page shows.
type listQuery struct {
	Text     string
	Statuses []machine.Status
	Zone     string
	Pool     string
	Owner    string
	Power    string // on, off, unknown, error
	Drift    bool
	Sort     string
	Desc     bool
	Page     int // from 1
	PerPage  int
}

const maxPerPage = 500

var sortKeys = map[string]func(a, b *row) int{
	"hostname": func(a, b *row) int { return naturalCompare(a.Hostname, b.Hostname) },
	"status":   func(a, b *row) int { return cmp.Compare(a.Status.String(), b.Status.String()) },
	"power":    func(a, b *row) int { return cmp.Compare(a.Power, b.Power) },
	"owner":    func(a, b *row) int { return cmp.Compare(a.Owner, b.Owner) },
	"zone":     func(a, b *row) int { return cmp.Compare(a.Zone, b.Zone) },
	"pool":     func(a, b *row) int { return cmp.Compare(a.Pool, b.Pool) },
	"cpu":      func(a, b *row) int { return cmp.Compare(a.CPU, b.CPU) },
	"memory":   func(a, b *row) int { return cmp.Compare(a.Memory, b.Memory) },
	"storage":  func(a, b *row) int { return cmp.Compare(a.Storage, b.Storage) },
}

// parseList reads a listQuery; what it cannot use it ignores and says so,
// because a list that silently drops a filter shows the wrong machines.
func parseList(v url.Values) (listQuery, []string) {
	q := listQuery{
		Text: strings.TrimSpace(v.Get("q")), Zone: v.Get("zone"), Pool: v.Get("pool"), Owner: v.Get("owner"),
		Power: v.Get("power"), Drift: v.Get("drift") == "1", Sort: v.Get("sort"), Desc: v.Get("dir") == "desc",
		Page: 1, PerPage: 50,
	}
	var problems []string
	for _, st := range v["status"] {
		if st == "" {
			continue
		}
		s, err := machine.ParseStatus(st)
		if err != nil {
			problems = append(problems, "status: "+err.Error())
			continue
		}
		q.Statuses = append(q.Statuses, s)
	}
	switch q.Power {
	case "", "on", "off", "unknown", "error":
	default:
		problems = append(problems, "power: one of on, off, unknown, error")
		q.Power = ""
	}
	if _, ok := sortKeys[q.Sort]; !ok {
		if q.Sort != "" {
			problems = append(problems, "sort: unknown column "+strconv.Quote(q.Sort))
		}
		q.Sort = "hostname"
	}
	if n, err := strconv.Atoi(v.Get("page")); err == nil && n > 0 {
		// Clamped: (page-1)*per_page must not overflow; a page past the
		// end shows the last one anyway.
		q.Page = min(n, 1<<30)
	}
	if n, err := strconv.Atoi(v.Get("per_page")); err == nil && n > 0 {
		q.PerPage = min(n, maxPerPage)
	}
	return q, problems
}

// values is the query string that asks for q again, with changes.
func (q listQuery) values() url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("q", q.Text)
	for _, s := range q.Statuses {
		v.Add("status", strings.ToLower(s.Key()))
	}
	set("zone", q.Zone)
	set("pool", q.Pool)
	set("owner", q.Owner)
	set("power", q.Power)
	if q.Drift {
		v.Set("drift", "1")
	}
	if q.Sort != "hostname" {
		v.Set("sort", q.Sort)
	}
	if q.Desc {
		v.Set("dir", "desc")
	}
	if q.Page > 1 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	if q.PerPage != 50 {
		v.Set("per_page", strconv.Itoa(q.PerPage))
	}
	return v
}

func (q listQuery) match(r *row) bool {
	if q.Text != "" && !strings.Contains(r.search, strings.ToLower(q.Text)) {
		return false
	}
	if len(q.Statuses) > 0 && !slices.Contains(q.Statuses, r.Status) {
		return false
	}
	if (q.Zone != "" && r.Zone != q.Zone) || (q.Pool != "" && r.Pool != q.Pool) || (q.Owner != "" && r.Owner != q.Owner) {
		return false
	}
	switch q.Power {
	case "error":
		if r.Failures == 0 {
			return false
		}
	case "on", "off", "unknown":
		if string(r.Power) != q.Power {
			return false
		}
	}
	return !q.Drift || r.Drift
}

// listPage is one page of the filtered, sorted list.
type listPage struct {
	Rows     []row
	Total    int // machines the viewer may see
	Matched  int // of which the filter keeps
	Page     int
	Pages    int
	ByStatus map[machine.Status]int // of the matched machines
}

// apply filters rows, which are in ascending order of q.Sort, and cuts
// out the page, in one pass.
func (q listQuery) apply(sorted []*row, viewer machine.Actor) listPage {
	p := listPage{ByStatus: map[machine.Status]int{}}
	lo := (q.Page - 1) * q.PerPage
	var last []*row // the last page seen, for a page past the end
	visit := func(r *row) {
		if !machine.CanView(viewer, &machine.Machine{Owner: r.Owner}) {
			return
		}
		p.Total++
		if !q.match(r) {
			return
		}
		i := p.Matched
		p.Matched++
		p.ByStatus[r.Status]++
		if i >= lo && i < lo+q.PerPage {
			p.Rows = append(p.Rows, *r)
		}
		if i%q.PerPage == 0 {
			last = last[:0]
		}
		last = append(last, r)
	}
	if q.Desc {
		for i := len(sorted) - 1; i >= 0; i-- {
			visit(sorted[i])
		}
	} else {
		for _, r := range sorted {
			visit(r)
		}
	}
	p.Pages = max(1, (p.Matched+q.PerPage-1)/q.PerPage)
	p.Page = min(q.Page, p.Pages)
	if p.Page < q.Page {
		for _, r := range last {
			p.Rows = append(p.Rows, *r)
		}
	}
	return p
}
