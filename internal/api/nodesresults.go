package api

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/store"
)

// commissioning-results/ and installation-results/: MAAS's older view of
// script results (NodeResultsHandler), which the maas CLI and some
// scripts still read. Each finished result of a machine's current
// commissioning, installation and testing sets is one entry with its
// output base64-encoded; stderr, when there is any, is a second entry
// named NAME.err.

func init() {
	addDocs(map[string]string{
		"NodeResultsHandler": "The results of the scripts machines last ran (commissioning, installation, testing), as MAAS's older API lists them.",
		"NodeResultsHandler read": doc("List the results of the machines you can see.", with("", []string{
			opt("system_id", "string", "Only these machines (repeat for more)."),
			opt("name", "string", "Only results of scripts of these names (repeat for more)."),
			opt("result_type", "integer", "Only this type: 0 commissioning, 1 installation, 2 testing.")})...),
	})
}

type nodeResultJSON struct {
	Created      string            `json:"created"`
	Updated      string            `json:"updated"`
	ID           int64             `json:"id"`
	Name         string            `json:"name"`
	ScriptResult *int              `json:"script_result"`
	ResultType   scripts.Type      `json:"result_type"`
	Node         map[string]string `json:"node"`
	Data         string            `json:"data"`
	ResourceURI  string            `json:"resource_uri"`
}

func (s *Server) nodeResultsRoutes() []route {
	return []route{get("", authenticated, s.listNodeResults)}
}

func (s *Server) listNodeResults(w http.ResponseWriter, r *request) error {
	var typ *scripts.Type
	if v := r.form.Get("result_type"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return badField("result_type", "Please enter an integer value")
		}
		t := scripts.Type(n)
		typ = &t
	}
	names := map[string]bool{}
	for _, n := range r.form["name"] {
		names[n] = true
	}
	ms, err := s.store.ListMachines(r.Context(), store.MachineFilter{SystemIDs: r.form["system_id"]})
	if err != nil {
		return err
	}
	out := []nodeResultJSON{}
	for _, m := range ms {
		if !machine.CanView(r.who.actor(), &m) {
			continue
		}
		sets, err := s.store.ListScriptSets(r.Context(), m.SystemID)
		if err != nil {
			return err
		}
		seen := map[scripts.Type]bool{}
		for _, set := range sets { // newest first: the first of a type is current
			current := !seen[set.ResultType]
			seen[set.ResultType] = true
			if !current || set.ResultType == scripts.Release || set.ResultType == scripts.Deployment ||
				(typ != nil && set.ResultType != *typ) {
				continue
			}
			for _, res := range set.Results {
				if !finished(res.Status) || (len(names) > 0 && !names[res.Name]) {
					continue
				}
				e := nodeResultJSON{Created: res.Started.UTC().Format(time.RFC3339), ID: res.ID, Name: res.Name,
					ScriptResult: res.ExitStatus, ResultType: set.ResultType, Node: map[string]string{"system_id": m.SystemID},
					ResourceURI: Prefix + "commissioning-scripts/"}
				if res.Started.IsZero() {
					e.Created = set.Created.UTC().Format(time.RFC3339)
				}
				e.Updated = maxTime(set.Created, res.Started, res.Ended).UTC().Format(time.RFC3339)
				data := res.Stdout
				if len(data) == 0 {
					data = res.Output
				}
				e.Data = base64.StdEncoding.EncodeToString(data)
				out = append(out, e)
				if len(res.Stderr) > 0 {
					e.Name, e.Data = res.Name+".err", base64.StdEncoding.EncodeToString(res.Stderr)
					out = append(out, e)
				}
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// finished is MAAS's list of statuses the view shows: passed, failed,
// timed out, aborted.
func finished(st scripts.Status) bool {
	return st == scripts.Passed || st == scripts.Failed || st == scripts.TimedOut || st == scripts.Aborted
}
