package ui

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/store"
)

// resultRow is one script result as the machine page lists it.
type resultRow struct {
	store.ScriptResult
	Runtime string
}

// resultSet is a machine's newest run of one type of scripts.
type resultSet struct {
	Type    scripts.Type
	Created time.Time
	Results []resultRow
}

func runtime(r store.ScriptResult) string {
	switch {
	case r.Started.IsZero():
		return "—"
	case r.Ended.IsZero():
		return "running for " + time.Since(r.Started).Round(time.Second).String()
	}
	return r.Ended.Sub(r.Started).Round(time.Millisecond).String()
}

// machineResults are the newest commissioning and testing runs of a
// machine, as the results API's current-commissioning and
// current-testing name them.
func (s *Server) machineResults(r *http.Request, systemID string) ([]resultSet, error) {
	sets, err := s.store.ListScriptSets(r.Context(), systemID)
	if err != nil {
		return nil, fmt.Errorf("script results: %w", err)
	}
	var out []resultSet
	seen := map[scripts.Type]bool{}
	for _, set := range sets { // newest first
		if seen[set.ResultType] {
			continue
		}
		seen[set.ResultType] = true
		rs := resultSet{Type: set.ResultType, Created: set.Created}
		for _, res := range set.Results {
			res.Output, res.Stdout, res.Stderr, res.Result = nil, nil, nil, nil
			rs.Results = append(rs.Results, resultRow{ScriptResult: res, Runtime: runtime(res)})
		}
		out = append(out, rs)
	}
	return out, nil
}

// resultData is one script result's page: its status, runtime and output.
type resultData struct {
	MachineID, Machine string
	Set                store.ScriptSet
	R                  resultRow
}

// resultPage shows one script result of a machine the viewer may see.
func (s *Server) resultPage(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	m, err := s.viewMachine(r, v.User)
	if err != nil {
		return "", err
	}
	id, err := strconv.ParseInt(r.PathValue("result"), 10, 64)
	if err != nil {
		return "", badRequest("no such result: " + r.PathValue("result"))
	}
	sets, err := s.store.ListScriptSets(r.Context(), m.SystemID)
	if err != nil {
		return "", fmt.Errorf("script results: %w", err)
	}
	for _, set := range sets {
		for _, res := range set.Results {
			if res.ID == id {
				d := resultData{MachineID: m.SystemID, Machine: m.FQDN(), Set: set, R: resultRow{ScriptResult: res, Runtime: runtime(res)}}
				v.Title, v.Nav, v.Data = res.Name+" on "+m.FQDN(), "machines", d
				return "result.html", nil
			}
		}
	}
	return "", fmt.Errorf("script result %d of %s: %w", id, m.SystemID, store.ErrNotFound)
}

// scriptsData is the scripts page.
type scriptsData struct {
	Scripts []store.Script
	Types   []scripts.Type
}

func (s *Server) scriptsPage(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	all, err := s.store.ListScripts(r.Context())
	if err != nil {
		return "", fmt.Errorf("scripts: %w", err)
	}
	v.Title, v.Nav, v.Data = "Scripts", "scripts", scriptsData{Scripts: all, Types: []scripts.Type{scripts.Commissioning, scripts.Testing}}
	return "scripts.html", nil
}
