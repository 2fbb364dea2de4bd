package api

import (
	"fmt"
	"strconv"
	"strings"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// list returns a parameter's values, accepting both repeated parameters and
// comma-separated lists (clients use either), without empty items.
func list(r *request, name string) []string {
	var out []string
	for _, v := range r.form[name] {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

func intParam(r *request, name string, min int) (int, bool, error) {
	v := strings.TrimSpace(r.form.Get(name))
	if v == "" {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < float64(min) || f > 1e12 {
		return 0, false, badField(name, "%q is not a number of at least %d", v, min)
	}
	return int(f), true, nil
}

func boolParam(r *request, name string) (bool, error) {
	v := strings.ToLower(strings.TrimSpace(r.form.Get(name)))
	switch v {
	case "", "0", "false", "no", "off":
		return false, nil
	case "1", "true", "yes", "on":
		return true, nil
	}
	return false, badField(name, "%q is not a boolean (true or false)", v)
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }
