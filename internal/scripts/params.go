package scripts

import (
	"fmt"
	"strings"

	"github.com/anvilmetal/anvil/internal/fielderr"
)

// ParameterTypes are the parameter types MAAS knows.
var ParameterTypes = []string{"boolean", "choice", "interface", "password", "runtime", "storage", "string", "url"}

// checkParameters validates the embedded parameters as MAAS's
// ParametersForm does; every message goes to the "parameters" field.
func checkParameters(params map[string]any) fielderr.Errors {
	var errs fielderr.Errors
	add := func(format string, args ...any) { errs.Add("parameters", format, args...) }
	for name, raw := range params {
		p, ok := raw.(map[string]any)
		if !ok {
			add("%s: must be a dictionary", name)
			continue
		}
		typ, isStr := p["type"].(string)
		if !isStr {
			add("%v: type must be a string", p["type"])
		}
		min, hasMin := p["min"]
		max, hasMax := p["max"]
		minN, minInt := min.(int)
		maxN, maxInt := max.(int)
		if hasMin && !minInt {
			add("%v: min must be an integer", min)
		}
		if hasMax && !maxInt {
			add("%v: max must be an integer", max)
		}
		for _, k := range []string{"title", "description", "argument_format", "default"} {
			if v, ok := p[k]; ok && v != nil {
				if _, isStr := v.(string); !isStr && !(k == "default" && isScalar(v)) {
					add("%v: %s must be a string", v, k)
				}
			}
		}
		required := true
		if v, ok := p["required"]; ok {
			b, isBool := v.(bool)
			if !isBool {
				add("%v: required must be a boolean", v)
			}
			required = b
		}
		if v, ok := p["allow_list"]; ok {
			if _, isBool := v.(bool); !isBool {
				add("%v: allow_list must be a boolean", v)
			}
			if typ != "url" {
				add("allow_list only supported with the url type.")
			}
		}
		if _, ok := p["choices"]; ok && typ != "choice" {
			add("choices only supported with the choice type.")
		}
		if typ == "choice" && p["choices"] == nil {
			add(`choices must be given with a "choice" parameter type!`)
		}
		if !contains(ParameterTypes, typ) && required {
			add("%s: type must be one of %s", typ, strings.Join(ParameterTypes, ", "))
		}
		if (typ == "storage" || typ == "interface" || typ == "url" || typ == "choice") && (hasMin || hasMax) {
			add("Type doesn't support min or max")
		}
		if typ == "runtime" && minInt && minN < 0 {
			add("runtime minimum must be greater than zero")
		}
		if minInt && maxInt && minN > maxN {
			add("min must be less than max")
		}
		if f, ok := p["argument_format"].(string); ok {
			checkArgumentFormat(typ, f, add)
		}
	}
	return errs
}

func isScalar(v any) bool {
	switch v.(type) {
	case int, float64, bool:
		return true
	}
	return false
}

var argumentKeys = map[string][]string{
	"storage":   {"{input}", "{name}", "{path}", "{model}", "{serial}"},
	"interface": {"{input}", "{name}", "{mac}", "{vendor}", "{product}"},
}

func checkArgumentFormat(typ, f string, add func(string, ...any)) {
	keys, ok := argumentKeys[typ]
	if !ok {
		keys = []string{"{input}"}
	}
	for _, k := range keys {
		if strings.Contains(f, k) {
			return
		}
	}
	add("%s", fmt.Sprintf("%s: argument_format must contain one of %s", typ, strings.Join(keys, ", ")))
}
