package api

import (
	"fmt"
	"math"
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

// maxQuery bounds numbers that only select (filters, limits, ids): far
// past any real count, and exactly representable in a float64.
const maxQuery = 1e12

// intParam reads a whole number from min to max; "" is "not given".
// MAAS's clients may send 4.0 for 4, so a number is parsed as a float
// first; NaN and the infinities (which compare false to every bound and
// convert to the least int64) and fractions are refused.
func intParam(r *request, name string, min, max int) (int, bool, error) {
	v := strings.TrimSpace(r.form.Get(name))
	if v == "" {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return 0, false, badField(name, "%q is not a whole number", truncate(v, 40))
	}
	if f < float64(min) || f > float64(max) {
		return 0, false, badField(name, "%q is out of range (%d to %d)", truncate(v, 40), min, max)
	}
	return int(f), true, nil
}

// inRange says whether f is a finite number from lo to hi: NaN compares
// false to both bounds, so a plain pair of comparisons lets it through.
func inRange(f, lo, hi float64) bool {
	return !math.IsNaN(f) && f >= lo && f <= hi
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
