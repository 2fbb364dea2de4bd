package scripts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/anvilmetal/anvil/internal/fielderr"
)

// Form is a create or update request: the fields given, as text, and the
// script's text when one was uploaded.
type Form struct {
	Fields    map[string]string
	Script    []byte
	HasScript bool
}

func (f Form) has(k string) bool { _, ok := f.Fields[k]; return ok }

// formFields are the fields a request (or embedded YAML) may set; "type"
// is the API's name for script_type.
var formFields = []string{"name", "title", "description", "tags", "script_type", "hardware_type", "parallel",
	"packages", "timeout", "destructive", "for_hardware", "may_reboot", "recommission", "apply_configured_networking"}

var yamlDelim = regexp.MustCompile(`(?i)\s*#\s*-+\s*(Start|End) MAAS (\d+\.\d+) script metadata\s+-+`)

// embedded returns the YAML between the metadata markers, without the
// comment signs; nil when the script has none.
func embedded(script []byte, errs *fielderr.Errors) map[string]any {
	lines := strings.Split(strings.ReplaceAll(string(script), "\r\n", "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "#!/") {
		errs.Add("script", "Must start with shebang.")
	}
	var found bool
	var text strings.Builder
	for _, line := range lines[1:] {
		if m := yamlDelim.FindStringSubmatch(line); m != nil {
			if !found && m[2] == "1.0" {
				found = true
				continue
			} else if found && m[2] == "1.0" {
				break
			}
		} else if found && strings.TrimSpace(line) != "" {
			_, after, ok := strings.Cut(line, "#")
			if !ok {
				errs.Add("script", `Missing "#" on YAML line.`)
				return nil
			}
			text.WriteString(after + "\n")
		}
	}
	var parsed any
	if err := yaml.Unmarshal([]byte(text.String()), &parsed); err != nil {
		errs.Add("script", "Invalid YAML: %v", err)
		return nil
	}
	m, _ := parsed.(map[string]any)
	return m
}

// yamlText is how a YAML value reads as a form field.
func yamlText(key string, v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		if key == "tags" || key == "for_hardware" {
			parts := make([]string, 0, len(x))
			for _, e := range x {
				parts = append(parts, fmt.Sprint(e))
			}
			return strings.Join(parts, ",")
		}
	case map[string]any:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return fmt.Sprint(v)
}

// Apply makes the script a request describes: old is the stored script
// (nil for a new one), isDefault says it ships with Anvil. Fields not
// given keep their old values; embedded YAML fills fields the request does
// not give and may not contradict those it does. Tags and timeout come
// from the YAML only for a new script, so that a new revision from
// upstream keeps the operator's. Errors are MAAS's words, per field.
func Apply(old *Script, isDefault bool, f Form) (Script, fielderr.Errors) {
	var errs fielderr.Errors
	fields := map[string]string{}
	for k, v := range f.Fields {
		if k == "type" {
			k = "script_type"
		}
		fields[k] = v
	}
	var s Script
	if old != nil {
		s = *old
	}
	if old == nil {
		s.Type = Testing
		if !f.HasScript {
			errs.Add("script", "This field is required.")
		}
	}
	if _, ok := fields["comment"]; ok && !f.HasScript {
		errs.Add("comment", `"comment" may only be used when specifying a "script" as well.`)
	}
	given := map[string]bool{}
	for k := range fields {
		given[k] = true
	}
	if f.HasScript {
		if y := embedded(f.Script, &errs); y != nil {
			s.Results, s.Parameters = y["results"], nil
			if p, ok := y["parameters"]; ok {
				pm, isMap := p.(map[string]any)
				if !isMap {
					errs.Add("parameters", "Must be a dictionary")
				}
				s.Parameters = pm
			}
			delete(y, "results")
			delete(y, "parameters")
			mergeYAML(y, fields, old == nil, &errs)
		} else {
			s.Results, s.Parameters = nil, nil
		}
	}
	if isDefault {
		// Only the operator's own settings may change on a shipped script.
		for k := range given {
			if k != "tags" && k != "timeout" {
				errs.Add(k, "Not allowed to change on default scripts.")
			}
		}
		if f.HasScript {
			errs.Add("script", "Not allowed to change on default scripts.")
		}
	}
	if old == nil && fields["name"] == "" {
		errs.Add("name", "This field is required.")
	}
	setFields(&s, fields, &errs)
	checkName(s.Name, &errs)
	validateResults(s.Results, &errs)
	errs.Merge("", checkParameters(s.Parameters))
	tagHardware(&s)
	return s, errs
}

// mergeYAML puts the YAML's values in fields where the request gave none
// and reports those that contradict the request.
func mergeYAML(y map[string]any, fields map[string]string, isNew bool, errs *fielderr.Errors) {
	if t, ok := y["tags"]; ok {
		delete(y, "tags")
		if _, given := fields["tags"]; isNew && !given {
			switch x := t.(type) {
			case string:
				fields["tags"] = x
			case []any:
				parts := []string{}
				for _, e := range x {
					str, ok := e.(string)
					if !ok {
						errs.Add("tags", "Embedded tags must be a string of comma seperated values, or a list of strings.")
						break
					}
					parts = append(parts, str)
				}
				fields["tags"] = strings.Join(parts, ",")
			default:
				errs.Add("tags", "Embedded tags must be a string of comma seperated values, or a list of strings.")
			}
		}
	}
	if t, ok := y["timeout"]; ok {
		delete(y, "timeout")
		if _, given := fields["timeout"]; isNew && !given {
			fields["timeout"] = fmt.Sprint(t)
		}
	}
	for _, k := range []string{"packages", "for_hardware"} {
		if v, ok := y[k]; ok {
			delete(y, k)
			if _, given := fields[k]; !given {
				if k == "for_hardware" {
					fields[k] = yamlText(k, v)
				} else {
					b, _ := json.Marshal(v)
					fields[k] = string(b)
				}
			}
		}
	}
	for _, k := range formFields {
		v, ok := y[k]
		if !ok {
			continue
		}
		text := yamlText(k, v)
		cur, given := fields[k]
		if !given {
			fields[k] = text
			continue
		}
		if !sameValue(k, cur, text) {
			errs.Add(k, "May not override values defined in embedded YAML.")
		}
	}
}

func sameValue(k, a, b string) bool {
	if a == b {
		return true
	}
	switch k {
	case "script_type":
		x, e1 := ParseType(a)
		y, e2 := ParseType(b)
		return e1 == nil && e2 == nil && x == y
	case "hardware_type":
		x, e1 := ParseHardwareType(a)
		y, e2 := ParseHardwareType(b)
		return e1 == nil && e2 == nil && x == y
	case "parallel":
		x, e1 := ParseParallel(a)
		y, e2 := ParseParallel(b)
		return e1 == nil && e2 == nil && x == y
	case "destructive", "may_reboot", "recommission", "apply_configured_networking":
		return parseBool(a) == parseBool(b)
	}
	return false
}

// parseBool is Django's BooleanField: "false", "0" and "" are false.
func parseBool(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "false", "0", "off", "no":
		return false
	}
	return true
}

func setFields(s *Script, fields map[string]string, errs *fielderr.Errors) {
	for k, v := range fields {
		var err error
		switch k {
		case "name":
			s.Name = v
		case "title":
			s.Title = v
		case "description":
			s.Description = v
		case "tags":
			s.Tags = splitList(v)
		case "script_type":
			if v != "" {
				s.Type, err = ParseType(v)
			}
		case "hardware_type":
			if v != "" {
				s.HardwareType, err = ParseHardwareType(v)
			}
		case "parallel":
			if v != "" {
				s.Parallel, err = ParseParallel(v)
			}
		case "timeout":
			if v != "" {
				s.Timeout, err = ParseTimeout(v)
			}
		case "destructive":
			s.Destructive = parseBool(v)
		case "may_reboot":
			s.MayReboot = parseBool(v)
		case "recommission":
			s.Recommission = parseBool(v)
		case "apply_configured_networking":
			s.ApplyNetwork = parseBool(v)
		case "for_hardware":
			s.ForHardware, err = parseForHardware(v)
		case "packages":
			s.Packages, err = parsePackages(v)
		}
		if err != nil {
			errs.Add(k, "%s", err.Error())
		}
	}
}

func splitList(v string) []string {
	out := []string{}
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" && !contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9@%+=:,./_-]+$`)

func checkName(name string, errs *fielderr.Errors) {
	if name == "" {
		return
	}
	if strings.EqualFold(name, "none") {
		errs.Add("name", `"none" is a reserved name.`)
	}
	if _, err := strconv.Atoi(name); err == nil {
		errs.Add("name", "Cannot be a number.")
	}
	if !safeName.MatchString(name) {
		errs.Add("name", "Name '%s' contains disallowed characters, e.g. space or quotes.", name)
	}
	if len(name) > 255 {
		errs.Add("name", "Ensure this value has at most 255 characters (it has %d).", len(name))
	}
}

var hardwareID = regexp.MustCompile(`(?i)^modalias:.+|pci:[\da-f]{4}:[\da-f]{4}|usb:[\da-f]{4}:[\da-f]{4}|system_vendor:.*|system_product:.*|system_version:.*|mainboard_vendor:.*|mainboard_product:.*$`)

func parseForHardware(v string) ([]string, error) {
	var list []string
	if json.Unmarshal([]byte(v), &list) != nil {
		list = splitList(v)
	}
	for _, id := range list {
		if !hardwareID.MatchString(id) {
			return nil, fmt.Errorf("Hardware identifier '%s' must be a modalias, PCI ID, USB ID, system vendor, system product, system version, mainboard vendor, or mainboard product.", id)
		}
	}
	return list, nil
}

func parsePackages(v string) (map[string]any, error) {
	if v == "" {
		return nil, nil
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return nil, fmt.Errorf("packages must be a dictionary of apt, snap and url lists")
	}
	for _, k := range []string{"apt", "snap", "url"} {
		if x, ok := p[k]; ok {
			if _, isList := x.([]any); !isList {
				p[k] = []any{x}
			}
		}
	}
	for _, k := range []string{"apt", "url"} {
		for _, e := range asList(p[k]) {
			if _, ok := e.(string); !ok {
				return nil, fmt.Errorf("Each %s package must be a string.", k)
			}
		}
	}
	for _, e := range asList(p["snap"]) {
		switch x := e.(type) {
		case string:
		case map[string]any:
			if n, ok := x["name"].(string); !ok || n == "" {
				return nil, fmt.Errorf("Snap package name must be defined.")
			}
		default:
			return nil, fmt.Errorf("Snap package must be a string.")
		}
	}
	return p, nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

func validateResults(r any, errs *fielderr.Errors) {
	switch x := r.(type) {
	case nil:
	case []any:
		for _, e := range x {
			if _, ok := e.(string); !ok {
				errs.Add("results", "Each result in a result list must be a string.")
			}
		}
	case map[string]any:
		for _, e := range x {
			d, ok := e.(map[string]any)
			if !ok {
				errs.Add("results", "Each result in a result dictionary must be a dictionary.")
				continue
			}
			if _, ok := d["title"]; !ok {
				errs.Add("results", "title must be included in a result dictionary.")
			}
			for _, k := range []string{"title", "description"} {
				if v, ok := d[k]; ok {
					if _, isStr := v.(string); !isStr {
						errs.Add("results", "%s must be a string.", k)
					}
				}
			}
		}
	default:
		errs.Add("results", "results must be a list of strings or a dictionary of dictionaries.")
	}
}

// tagHardware keeps the tags MAAS derives: "destructive" on destructive
// scripts, and the hardware type's name.
func tagHardware(s *Script) {
	var out []string
	for _, t := range s.Tags {
		if t == "destructive" {
			continue
		}
		derived := false
		for _, n := range hardwareNames {
			if t == strings.ToLower(n) {
				derived = true
			}
		}
		if !derived {
			out = append(out, t)
		}
	}
	if s.Destructive {
		out = append(out, "destructive")
	}
	out = append(out, strings.ToLower(s.HardwareType.String()))
	s.Tags = out
}
