package network

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// FieldErrors maps a field to what is wrong with it, in words, the shape
// of MAAS's 400 answers ({"field": ["message", ...]}). A nil or empty map
// means no error.
type FieldErrors map[string][]string

// Add records a message against field, once: the same fault found twice
// (two parents on another VLAN) reads once.
func (e *FieldErrors) Add(field, format string, args ...any) {
	if *e == nil {
		*e = FieldErrors{}
	}
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains((*e)[field], msg) {
		(*e)[field] = append((*e)[field], msg)
	}
}

// Merge adds other's errors, each field prefixed with prefix (when not
// empty) as "prefix.field".
func (e *FieldErrors) Merge(prefix string, other FieldErrors) {
	for f, msgs := range other {
		if prefix != "" {
			f = prefix + "." + f
		}
		for _, m := range msgs {
			e.Add(f, "%s", m)
		}
	}
}

// Err returns e as an error, or nil when there is nothing in it.
func (e FieldErrors) Err() error {
	if len(e) == 0 {
		return nil
	}
	return e
}

// Error lists the fields in order, so the same model always reads the same.
func (e FieldErrors) Error() string {
	fields := make([]string, 0, len(e))
	for f := range e {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", f, strings.Join(e[f], " "))
	}
	return b.String()
}
