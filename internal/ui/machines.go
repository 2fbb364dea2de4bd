package ui

import (
	"net/http"
	"net/url"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// machinesData is the machine list page and its live-refreshed body.
type machinesData struct {
	Q        listQuery
	Problems []string
	List     listPage
	Statuses []statusCount
	Zones    []string
	Pools    []string
	Query    string // the query string that asks for this view again
	Sorts    map[string]string
	Prev     string
	Next     string
}

type statusCount struct {
	Status machine.Status
	Count  int
}

// bulkActions are what the list offers for selected machines; each is the
// API operation the page's script calls, per machine.
var bulkActions = []struct{ Op, Label string }{
	{"commission", "Commission"}, {"deploy", "Deploy"}, {"release", "Release"},
	{"power_on", "Power on"}, {"power_off", "Power off"}, {"abort", "Abort"},
	{"mark_broken", "Mark broken"}, {"mark_fixed", "Mark fixed"}, {"delete", "Delete"},
}

func (s *Server) machinesData(r *http.Request, u store.User) (machinesData, error) {
	if _, err := s.fleet.refresh(r.Context()); err != nil {
		return machinesData{}, err
	}
	// URL.Query would drop a query it cannot parse (over 10,000
	// parameters) and the filtered list would become the whole fleet.
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return machinesData{}, badRequest("cannot parse the query string: " + err.Error())
	}
	q, problems := parseList(vals)
	d := machinesData{Q: q, Problems: problems, List: q.apply(s.fleet.ordered(q.Sort), machine.Actor{Name: u.Name, Admin: u.Admin}), Sorts: map[string]string{}}
	for _, st := range machine.AllStatuses {
		if n := d.List.ByStatus[st]; n > 0 {
			d.Statuses = append(d.Statuses, statusCount{st, n})
		}
	}
	d.Query = q.values().Encode()
	for k := range sortKeys {
		o := q
		o.Sort, o.Desc, o.Page = k, q.Sort == k && !q.Desc, 1
		d.Sorts[k] = o.values().Encode()
	}
	if d.List.Page > 1 {
		o := q
		o.Page = d.List.Page - 1
		d.Prev = o.values().Encode()
	}
	if d.List.Page < d.List.Pages {
		o := q
		o.Page = d.List.Page + 1
		d.Next = o.values().Encode()
	}
	return d, nil
}

func (s *Server) machinesPage(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	d, err := s.machinesData(r, v.User)
	if err != nil {
		return "", err
	}
	if d.Zones, d.Pools, err = s.groupNames(r); err != nil {
		return "", err
	}
	images, err := s.deployableImages(r)
	if err != nil {
		return "", err
	}
	facts, err := s.siteFacts(r.Context(), images)
	if err != nil {
		return "", err
	}
	v.Title, v.Nav, v.Data = "Machines", "machines", struct {
		machinesData
		Actions     any
		AllStatuses []machine.Status
		Images      []string
		Gaps        []gap
	}{d, bulkActions, machine.AllStatuses, images, siteGaps(facts)}
	return "machines.html", nil
}

func (s *Server) machineRows(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	d, err := s.machinesData(r, v.User)
	if err != nil {
		return "", err
	}
	v.Data = d
	return "rows.html", nil
}
