package api

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/store"
)

// MAAS's node script results: a machine's script sets, each with its
// results, at nodes/{system_id}/results/.

type scriptSetJSON struct {
	ID          int64              `json:"id"`
	SystemID    string             `json:"system_id"`
	Type        scripts.Type       `json:"type"`
	TypeName    string             `json:"type_name"`
	LastPing    *string            `json:"last_ping"`
	Status      int                `json:"status"`
	StatusName  string             `json:"status_name"`
	Started     *string            `json:"started"`
	Ended       *string            `json:"ended"`
	Runtime     string             `json:"runtime"`
	Results     []scriptResultJSON `json:"results"`
	Suppressed  bool               `json:"suppressed"`
	ResourceURI string             `json:"resource_uri"`
}

type scriptResultJSON struct {
	ID                  int64          `json:"id"`
	Created             string         `json:"created"`
	Updated             string         `json:"updated"`
	Name                string         `json:"name"`
	Status              scripts.Status `json:"status"`
	StatusName          string         `json:"status_name"`
	ExitStatus          *int           `json:"exit_status"`
	Started             *string        `json:"started"`
	Ended               *string        `json:"ended"`
	Runtime             string         `json:"runtime"`
	StartTime           float64        `json:"starttime"`
	EndTime             float64        `json:"endtime"`
	EstimatedRuntime    string         `json:"estimated_runtime"`
	Parameters          map[string]any `json:"parameters"`
	ScriptID            *int64         `json:"script_id"`
	ScriptRevisionID    *int64         `json:"script_revision_id"`
	Suppressed          bool           `json:"suppressed"`
	PhysicalBlockDevice *string        `json:"physical_blockdevice"`
	Interface           *string        `json:"interface"`
	Output              *string        `json:"output,omitempty"`
	Stdout              *string        `json:"stdout,omitempty"`
	Stderr              *string        `json:"stderr,omitempty"`
	Result              *string        `json:"result,omitempty"`
}

var resultTypeNames = map[scripts.Type]string{scripts.Commissioning: "Commissioning", 1: "Installation", scripts.Testing: "Testing",
	scripts.Release: "Release", scripts.Deployment: "Deployment"}

// parseResultType is MAAS's translate_result_type.
func parseResultType(v string) (scripts.Type, error) {
	if n, err := strconv.Atoi(v); err == nil {
		if _, ok := resultTypeNames[scripts.Type(n)]; ok {
			return scripts.Type(n), nil
		}
		return 0, fmt.Errorf("Invalid result type numeric value.")
	}
	switch strings.ToLower(v) {
	case "commissioning", "commission":
		return scripts.Commissioning, nil
	case "testing", "test":
		return scripts.Testing, nil
	case "installation", "install":
		return 1, nil
	case "release":
		return scripts.Release, nil
	case "deployment":
		return scripts.Deployment, nil
	}
	return 0, fmt.Errorf("Result type must be commissioning, testing, deployment, installation or release.")
}

// fmtTime is MAAS's email-style time, or null.
func fmtTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC1123Z)
	return &s
}

// runtimeText is MAAS's runtime: "0:00:03", empty before a start.
func runtimeText(start, end time.Time, now time.Time) string {
	if start.IsZero() {
		return ""
	}
	if end.IsZero() {
		end = now
	}
	return scripts.FormatTimeout(end.Sub(start).Truncate(time.Second))
}

// resultView is how a read filters and shows results.
type resultView struct {
	filters    []string
	hardware   *scripts.HardwareType
	withOutput bool
	tags       map[int64][]string // script ID → tags, for filters
}

func (s *Server) resultView(r *request) (resultView, error) {
	v := resultView{withOutput: flagParam(r, "include_output")}
	if f := r.form.Get("filters"); f != "" {
		v.filters = strings.Split(f, ",")
	}
	if h := r.form.Get("hardware_type"); h != "" {
		ht, err := scripts.ParseHardwareType(h)
		if err != nil {
			return v, &badRequest{err.Error()}
		}
		v.hardware = &ht
	}
	if v.filters != nil {
		all, err := s.store.ListScripts(r.Context())
		if err != nil {
			return v, err
		}
		v.tags = map[int64][]string{}
		for _, sc := range all {
			v.tags[sc.ID] = sc.Meta.Tags
		}
	}
	return v, nil
}

func (v resultView) keep(r store.ScriptResult) bool {
	if v.hardware != nil && r.HardwareType != *v.hardware {
		return false
	}
	if v.filters == nil {
		return true
	}
	for _, f := range v.filters {
		if f == r.Name || f == strconv.FormatInt(r.ID, 10) {
			return true
		}
		for _, t := range v.tags[r.ScriptID] {
			if t == f {
				return true
			}
		}
	}
	return false
}

func renderScriptSet(set store.ScriptSet, v resultView, now time.Time) scriptSetJSON {
	out := scriptSetJSON{ID: set.ID, SystemID: set.SystemID, Type: set.ResultType, TypeName: resultTypeNames[set.ResultType],
		Results: []scriptResultJSON{}, ResourceURI: fmt.Sprintf("%snodes/%s/results/%d/", Prefix, set.SystemID, set.ID)}
	var statuses []scripts.Status
	var started, ended, ping time.Time
	allDone := true
	for _, r := range set.Results {
		statuses = append(statuses, r.Status)
		if !r.Started.IsZero() && (started.IsZero() || r.Started.Before(started)) {
			started = r.Started
		}
		if r.Ended.After(ended) {
			ended = r.Ended
		}
		ping = maxTime(ping, r.Started, r.Ended)
		allDone = allDone && r.Status.Done()
		if v.keep(r) {
			out.Results = append(out.Results, renderResult(r, set.Created, v.withOutput, now))
		}
	}
	if !allDone {
		ended = time.Time{}
	}
	st := scripts.Summary(statuses)
	if st == scripts.None {
		st = scripts.Passed // an empty set passed at once
	}
	out.Status, out.StatusName = int(st), st.String()
	out.Started, out.Ended, out.LastPing = fmtTime(started), fmtTime(ended), fmtTime(ping)
	out.Runtime = runtimeText(started, ended, now)
	return out
}

func maxTime(ts ...time.Time) time.Time {
	var m time.Time
	for _, t := range ts {
		if t.After(m) {
			m = t
		}
	}
	return m
}

func renderResult(r store.ScriptResult, created time.Time, withOutput bool, now time.Time) scriptResultJSON {
	out := scriptResultJSON{ID: r.ID, Created: created.UTC().Format(time.RFC1123Z), Name: r.Name, Status: r.Status, StatusName: r.Status.String(),
		ExitStatus: r.ExitStatus, Started: fmtTime(r.Started), Ended: fmtTime(r.Ended), Runtime: runtimeText(r.Started, r.Ended, now),
		Parameters: redacted(r.Parameters), Suppressed: r.Suppressed, EstimatedRuntime: "Unknown"}
	out.Updated = *cmp.Or(fmtTime(maxTime(created, r.Started, r.Ended)), &out.Created)
	if !r.Started.IsZero() {
		out.StartTime = float64(r.Started.UnixNano()) / 1e9
	}
	if !r.Ended.IsZero() {
		out.EndTime = float64(r.Ended.UnixNano()) / 1e9
	}
	if r.ScriptID != 0 {
		id, ver := r.ScriptID, r.ScriptVersionID
		out.ScriptID, out.ScriptRevisionID = &id, &ver
	}
	if r.Instance != "" {
		inst := r.Instance
		if r.HardwareType == scripts.Network {
			out.Interface = &inst
		} else {
			out.PhysicalBlockDevice = &inst
		}
	}
	if withOutput {
		enc := func(b []byte) *string { s := base64.StdEncoding.EncodeToString(b); return &s }
		out.Output, out.Stdout, out.Stderr, out.Result = enc(r.Output), enc(r.Stdout), enc(r.Stderr), enc(r.Result)
	}
	return out
}

// redacted hides password parameters' values, as MAAS does.
func redacted(params map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range params {
		p, ok := v.(map[string]any)
		if ok && p["type"] == "password" {
			if _, has := p["value"]; has {
				q := map[string]any{}
				for a, b := range p {
					q[a] = b
				}
				q["value"] = "REDACTED"
				v = q
			}
		}
		out[k] = v
	}
	return out
}

func (s *Server) resultsRoutes() []route {
	return []route{get("", authenticated, func(w http.ResponseWriter, r *request) error {
		m, err := s.visibleMachine(r)
		if err != nil {
			return err
		}
		var typ *scripts.Type
		if t := r.form.Get("type"); t != "" {
			rt, err := parseResultType(t)
			if err != nil {
				return &badRequest{err.Error()}
			}
			typ = &rt
		}
		v, err := s.resultView(r)
		if err != nil {
			return err
		}
		sets, err := s.store.ListScriptSets(r.Context(), m.SystemID)
		if err != nil {
			return err
		}
		out := []scriptSetJSON{}
		for i := len(sets) - 1; i >= 0; i-- { // oldest first, as MAAS lists them
			if typ == nil || sets[i].ResultType == *typ {
				out = append(out, renderScriptSet(sets[i], v, s.svc.Now()))
			}
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})}
}

// scriptSet finds the set a path names: its ID, or current-commissioning
// and current-testing (the newest of its type).
func (s *Server) scriptSet(r *request) (machine.Machine, store.ScriptSet, error) {
	m, err := s.visibleMachine(r)
	if err != nil {
		return m, store.ScriptSet{}, err
	}
	sets, err := s.store.ListScriptSets(r.Context(), m.SystemID)
	if err != nil {
		return m, store.ScriptSet{}, err
	}
	id := r.PathValue("id")
	switch id {
	case "current-commissioning", "current-testing", "current-installation":
		want := map[string]scripts.Type{"current-commissioning": scripts.Commissioning, "current-testing": scripts.Testing, "current-installation": 1}[id]
		for _, set := range sets {
			if set.ResultType == want {
				return m, set, nil
			}
		}
		return m, store.ScriptSet{}, &badRequest{fmt.Sprintf("No %s script set exists for this node.", strings.ReplaceAll(id, "-", " "))}
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return m, store.ScriptSet{}, &badRequest{fmt.Sprintf(`Unknown id "%s" must be current-commissioning, current-testing, current-installation, or the id number of a specific result.`, truncate(id, 40))}
	}
	for _, set := range sets {
		if set.ID == n {
			return m, set, nil
		}
	}
	return m, store.ScriptSet{}, noSuch("ScriptSet")
}

func (s *Server) resultRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			_, set, err := s.scriptSet(r)
			if err != nil {
				return err
			}
			v, err := s.resultView(r)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderScriptSet(set, v, s.svc.Now()))
			return nil
		}),
		// download is the combined output of each result as text, each
		// under a title line, as MAAS's filetype=txt.
		get("download", authenticated, func(w http.ResponseWriter, r *request) error {
			_, set, err := s.scriptSet(r)
			if err != nil {
				return err
			}
			v, err := s.resultView(r)
			if err != nil {
				return err
			}
			pick := map[string]func(store.ScriptResult) []byte{
				"combined": func(x store.ScriptResult) []byte { return x.Output },
				"stdout":   func(x store.ScriptResult) []byte { return x.Stdout },
				"stderr":   func(x store.ScriptResult) []byte { return x.Stderr },
				"result":   func(x store.ScriptResult) []byte { return x.Result },
			}
			out := r.form.Get("output")
			if out == "" {
				out = "combined"
			}
			get, ok := pick[out]
			if !ok {
				return &badRequest{"Unknown output type " + truncate(out, 20) + ": use combined, stdout, stderr or result."}
			}
			if ft := r.form.Get("filetype"); ft != "" && ft != "txt" {
				return &badRequest{"Anvil downloads results as txt only."}
			}
			var b strings.Builder
			for _, x := range set.Results {
				if !v.keep(x) {
					continue
				}
				title := x.Name
				if x.Instance != "" {
					title += " - " + x.Instance
				}
				fmt.Fprintf(&b, "%s %s %s\n%s", title, strings.Repeat("-", max(0, 20-len(title))), x.Status, get(x))
				if len(get(x)) > 0 && !strings.HasSuffix(string(get(x)), "\n") {
					b.WriteString("\n")
				}
			}
			w.Header().Set("Content-Type", "application/binary")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(b.String()))
			return nil
		}),
	}
}

func init() {
	view := []string{
		opt("hardware_type", "string", "Only results of scripts for this hardware type: node, cpu, memory, storage, network."),
		opt("include_output", "string", "Include each result's output, stdout, stderr and result YAML, base64-encoded."),
		opt("filters", "string", "A comma-separated list of script names, tags or result IDs: only those results."),
	}
	addDocs(map[string]string{
		"NodeScriptResultsHandler": "A machine's script sets: each commissioning or testing run with its results.",
		"NodeScriptResultsHandler read": doc("List the machine's script sets, oldest first.",
			with("", append([]string{opt("type", "string", "Only sets of this type: commissioning or testing.")}, view...))...),
		"NodeScriptResultHandler":      "One script set: its ID, current-commissioning or current-testing.",
		"NodeScriptResultHandler read": doc("Read a script set with its results.", with("", view)...),
		"NodeScriptResultHandler download": doc("Download the set's output as text, each result under a title line.", "",
			opt("output", "string", "combined (default), stdout, stderr or result."),
			opt("filters", "string", "A comma-separated list of script names, tags or result IDs."),
			opt("filetype", "string", "txt, the only type Anvil writes.")),
	})
}
