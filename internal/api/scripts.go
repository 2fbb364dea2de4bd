package api

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/store"
)

type scriptJSON struct {
	ID               int64          `json:"id"`
	Name             string         `json:"name"`
	Title            string         `json:"title"`
	Description      string         `json:"description"`
	Tags             []string       `json:"tags"`
	Type             scripts.Type   `json:"type"`
	TypeName         string         `json:"type_name"`
	HardwareType     int            `json:"hardware_type"`
	HardwareTypeName string         `json:"hardware_type_name"`
	Parallel         int            `json:"parallel"`
	ParallelName     string         `json:"parallel_name"`
	Results          any            `json:"results"`
	Parameters       map[string]any `json:"parameters"`
	Packages         map[string]any `json:"packages"`
	Timeout          string         `json:"timeout"`
	Destructive      bool           `json:"destructive"`
	ForHardware      []string       `json:"for_hardware"`
	MayReboot        bool           `json:"may_reboot"`
	Recommission     bool           `json:"recommission"`
	History          []historyJSON  `json:"history"`
	Default          bool           `json:"default"`
	ApplyNetwork     bool           `json:"apply_configured_networking"`
	ResourceURI      string         `json:"resource_uri"`
}

type historyJSON struct {
	ID      int64  `json:"id"`
	Comment string `json:"comment"`
	Created string `json:"created"`
	Data    string `json:"data,omitempty"`
}

var scriptTypeNames = map[scripts.Type]string{scripts.Commissioning: "Commissioning script", scripts.Testing: "Testing script",
	scripts.Release: "Release script", scripts.Deployment: "Deployment script"}

func renderScript(sc store.Script, withText bool) scriptJSON {
	m := sc.Meta
	out := scriptJSON{
		ID: sc.ID, Name: m.Name, Title: m.Title, Description: m.Description, Tags: strs(m.Tags),
		Type: m.Type, TypeName: scriptTypeNames[m.Type], HardwareType: int(m.HardwareType), HardwareTypeName: m.HardwareType.String(),
		Parallel: int(m.Parallel), ParallelName: m.Parallel.String(), Results: m.Results, Parameters: m.Parameters,
		Packages: m.Packages, Timeout: scripts.FormatTimeout(m.Timeout), Destructive: m.Destructive, ForHardware: strs(m.ForHardware),
		MayReboot: m.MayReboot, Recommission: m.Recommission, Default: sc.Default, ApplyNetwork: m.ApplyNetwork,
		ResourceURI: Prefix + "scripts/" + m.Name, History: []historyJSON{},
	}
	if out.Results == nil {
		out.Results = map[string]any{}
	}
	if out.Parameters == nil {
		out.Parameters = map[string]any{}
	}
	if out.Packages == nil {
		out.Packages = map[string]any{}
	}
	for _, v := range sc.Versions {
		h := historyJSON{ID: v.ID, Comment: v.Comment, Created: v.Created.UTC().Format(http.TimeFormat)}
		if withText {
			h.Data = base64.StdEncoding.EncodeToString(v.Data)
		}
		out.History = append(out.History, h)
	}
	return out
}

func strs(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// scriptForm reads a create or update request as MAAS does: the text in
// a "script" file part, or a single file part whose name is the script's.
func scriptForm(r *request) scripts.Form {
	f := scripts.Form{Fields: map[string]string{}}
	for k, v := range r.form {
		if k != "op" && k != "script" && len(v) > 0 {
			f.Fields[k] = v[0]
		}
	}
	if parts := r.files["script"]; len(parts) > 0 {
		f.Script, f.HasScript = parts[0], true
	} else if v, ok := r.form["script"]; ok && len(v) > 0 {
		f.Script, f.HasScript = []byte(v[0]), true
	} else if len(r.files) == 1 {
		for name, parts := range r.files {
			f.Fields["name"], f.Script, f.HasScript = name, parts[0], true
		}
	}
	return f
}

func (s *Server) scriptsRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			all, err := s.store.ListScripts(r.Context())
			if err != nil {
				return err
			}
			keep, err := scriptFilter(r)
			if err != nil {
				return err
			}
			withText := flagParam(r, "include_script")
			out := []scriptJSON{}
			for _, sc := range all {
				if keep(sc.Meta) {
					out = append(out, renderScript(sc, withText))
				}
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			f := scriptForm(r)
			meta, errs := scripts.Apply(nil, false, f)
			if errs.Err() != nil {
				return errs
			}
			sc, err := s.store.CreateScript(r.Context(), store.Script{Meta: meta}, f.Script, f.Fields["comment"])
			if err != nil {
				return scriptSaveError(err)
			}
			writeJSON(w, http.StatusOK, renderScript(sc, false))
			return nil
		}),
	}
}

// scriptFilter is scripts read's type, hardware_type and filters (names
// or tags, any of them).
func scriptFilter(r *request) (func(scripts.Script) bool, error) {
	var typ *scripts.Type
	var hw *scripts.HardwareType
	if v, ok := r.form["type"]; ok && len(v) > 0 {
		t, err := scripts.ParseType(v[0])
		if err != nil {
			return nil, &badRequest{err.Error()}
		}
		typ = &t
	}
	if v, ok := r.form["hardware_type"]; ok && len(v) > 0 {
		h, err := scripts.ParseHardwareType(v[0])
		if err != nil {
			return nil, &badRequest{err.Error()}
		}
		hw = &h
	}
	var filters []string
	if v := r.form.Get("filters"); v != "" {
		filters = strings.Split(v, ",")
	}
	return func(m scripts.Script) bool {
		if typ != nil && m.Type != *typ || hw != nil && m.HardwareType != *hw {
			return false
		}
		if filters == nil {
			return true
		}
		for _, f := range filters {
			if f == m.Name || m.HasTag(f) {
				return true
			}
		}
		return false
	}, nil
}

// flagParam is an optional flag given as a query parameter
// (include_script=1); anything but false, 0, off, no or empty is true.
func flagParam(r *request, name string) bool {
	switch strings.ToLower(r.form.Get(name)) {
	case "", "false", "0", "off", "no":
		return false
	}
	return true
}

func (s *Server) scriptRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			sc, err := s.store.GetScript(r.Context(), r.id)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderScript(sc, flagParam(r, "include_script")))
			return nil
		}),
		put(adminOnly, func(w http.ResponseWriter, r *request) error {
			sc, err := s.store.GetScript(r.Context(), r.id)
			if err != nil {
				return err
			}
			f := scriptForm(r)
			meta, errs := scripts.Apply(&sc.Meta, sc.Default, f)
			if errs.Err() != nil {
				return errs
			}
			var text []byte
			if f.HasScript {
				text = f.Script
			}
			up, err := s.store.UpdateScript(r.Context(), sc.ID, meta, text, f.Fields["comment"])
			if err != nil {
				return scriptSaveError(err)
			}
			writeJSON(w, http.StatusOK, renderScript(up, false))
			return nil
		}),
		del(adminOnly, func(w http.ResponseWriter, r *request) error {
			sc, err := s.store.GetScript(r.Context(), r.id)
			if err != nil {
				return err
			}
			if sc.Default {
				return &badRequest{"Unable to delete default script"}
			}
			if err := s.store.DeleteScript(r.Context(), sc.ID); err != nil {
				return err
			}
			writeNoContent(w)
			return nil
		}),
		get("download", authenticated, func(w http.ResponseWriter, r *request) error {
			sc, err := s.store.GetScript(r.Context(), r.id)
			if err != nil {
				return err
			}
			rev := r.form.Get("revision")
			if rev == "" {
				rev = r.form.Get("rev")
			}
			data := sc.Versions[0].Data
			if rev != "" {
				n, err := strconv.ParseInt(rev, 10, 64)
				if err != nil {
					return &badRequest{"Invalid revision: Please enter an integer value"}
				}
				data = nil
				for _, v := range sc.Versions {
					if v.ID == n {
						data = v.Data
					}
				}
				if data == nil {
					return &badRequest{rev + " not found in history"}
				}
			}
			w.Header().Set("Content-Type", "application/binary")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(data)
			return nil
		}),
		post("revert", adminOnly, func(w http.ResponseWriter, r *request) error {
			sc, err := s.store.GetScript(r.Context(), r.id)
			if err != nil {
				return err
			}
			to, err := mandatory(r, "to")
			if err != nil {
				return err
			}
			n, err := strconv.ParseInt(to, 10, 64)
			if err != nil {
				return &badRequest{"Invalid to: Please enter an integer value"}
			}
			if sc.Default {
				return &badRequest{"Unable to revert default script"}
			}
			keep, err := revertTarget(sc.Versions, n)
			if err != nil {
				return err
			}
			up, err := s.store.RevertScript(r.Context(), sc.ID, keep)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderScript(up, false))
			return nil
		}),
		post("add_tag", adminOnly, func(w http.ResponseWriter, r *request) error {
			return s.retagScript(w, r, true)
		}),
		post("remove_tag", adminOnly, func(w http.ResponseWriter, r *request) error {
			return s.retagScript(w, r, false)
		}),
	}
}

// scriptSaveError answers a name already taken as MAAS's form does.
func scriptSaveError(err error) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		return badField("name", "Script with this Name already exists.")
	}
	return err
}

// revertTarget is MAAS's VersionedTextFile.revert: to is a revision's ID,
// or how many revisions to go back (0 or negative); versions are newest
// first.
func revertTarget(versions []store.ScriptVersion, to int64) (int64, error) {
	if to <= 0 {
		back := int(-to)
		if back >= len(versions) {
			return 0, &badRequest{"Goes too far back."}
		}
		return versions[back].ID, nil
	}
	for _, v := range versions {
		if v.ID == to {
			return to, nil
		}
	}
	return 0, &badRequest{strconv.FormatInt(to, 10) + " not found in history"}
}

func (s *Server) retagScript(w http.ResponseWriter, r *request, add bool) error {
	sc, err := s.store.GetScript(r.Context(), r.id)
	if err != nil {
		return err
	}
	tag, err := mandatory(r, "tag")
	if err != nil {
		return err
	}
	if add && strings.Contains(tag, ",") {
		return &badRequest{`Tag may not contain a ",".`}
	}
	m := sc.Meta
	var tags []string
	for _, t := range m.Tags {
		if t != tag {
			tags = append(tags, t)
		}
	}
	if add {
		tags = append(tags, tag)
	}
	m.Tags = tags
	up, err := s.store.UpdateScript(r.Context(), sc.ID, m, nil, "")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderScript(up, false))
	return nil
}

func init() {
	scriptFields := []string{
		opt("title", "string", "The title of the script."),
		opt("description", "string", "What the script does."),
		opt("tags", "string", "A comma-separated list of tags."),
		opt("type", "string", "commissioning or testing (also release, deployment); testing by default."),
		opt("hardware_type", "string", "node, cpu, memory, storage, network or gpu."),
		opt("parallel", "string", "disabled, instance or any: what the script may run alongside."),
		opt("timeout", "string", "Seconds, or HH:MM:SS; 0 means no limit."),
		opt("destructive", "boolean", "Whether the script overwrites disks."),
		opt("script", "file", "The script's text; it may carry MAAS's embedded YAML metadata."),
		opt("comment", "string", "What this revision changes (with script)."),
		opt("for_hardware", "string", "modalias:, pci: or usb: identifiers the script is for."),
		opt("may_reboot", "boolean", "Whether the script may reboot the machine."),
		opt("recommission", "boolean", "Whether commissioning runs again after it."),
		opt("apply_configured_networking", "boolean", "Whether the machine's network configuration is applied first."),
	}
	addDocs(map[string]string{
		"NodeScriptsHandler": "Commissioning and testing scripts.",
		"NodeScriptsHandler read": doc("List the scripts.", "",
			opt("type", "string", "Only scripts of this type."),
			opt("hardware_type", "string", "Only scripts for this hardware type."),
			opt("include_script", "string", "Include each revision's text, base64-encoded."),
			opt("filters", "string", "A comma-separated list of names or tags: only scripts with one of them.")),
		"NodeScriptsHandler create": doc("Upload a script (administrators).",
			with("Metadata embedded in the script between '# --- Start MAAS 1.0 script metadata ---' and its End line fills the fields not given; a field given that contradicts it is refused. A single file part names the script by its part name.",
				append([]string{req("name", "string", "The script's name (no spaces or quotes, not a number).")}, scriptFields...))...),
		"NodeScriptHandler":      "One script, by name or ID.",
		"NodeScriptHandler read": doc("Read a script.", "", opt("include_script", "string", "Include each revision's text, base64-encoded.")),
		"NodeScriptHandler update": doc("Update a script (administrators).",
			with("A new script text becomes a new revision; the embedded metadata's tags and timeout do not replace those set. Only tags and timeout change on scripts shipped with Anvil.",
				append([]string{opt("name", "string", "A new name.")}, scriptFields...))...),
		"NodeScriptHandler delete": doc("Delete a script (administrators); those shipped with Anvil stay."),
		"NodeScriptHandler download": doc("Download a script's text.", "",
			opt("revision", "int", "The revision's ID (rev for short); the newest by default.")),
		"NodeScriptHandler revert": doc("Go back to an earlier revision (administrators); the revisions after it are deleted.", "",
			req("to", "int", "A revision's ID, or how many revisions to go back as a negative number.")),
		"NodeScriptHandler add_tag":    doc("Add a tag to a script (administrators).", "", req("tag", "string", "The tag (no commas).")),
		"NodeScriptHandler remove_tag": doc("Remove a tag from a script (administrators).", "", req("tag", "string", "The tag.")),
	})
}
