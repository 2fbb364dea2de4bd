// Package fielderr is validation errors in the shape of MAAS's 400
// answers: field → messages ({"field": ["message", ...]}), with "__all__"
// for those that belong to no one field, as Django's forms have it. The
// pure models (network, storage) return them; the API writes them out.
package fielderr

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// All is the key of errors that belong to no single field.
const All = "__all__"

// Errors maps a field to what is wrong with it, in words. A nil or empty
// map means no error.
type Errors map[string][]string

// Add records a message against field, once: the same fault found twice
// reads once.
func (e *Errors) Add(field, format string, args ...any) {
	if *e == nil {
		*e = Errors{}
	}
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains((*e)[field], msg) {
		(*e)[field] = append((*e)[field], msg)
	}
}

// Merge adds other's errors, each field prefixed with prefix (when not
// empty) as "prefix.field".
func (e *Errors) Merge(prefix string, other Errors) {
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
func (e Errors) Err() error {
	if len(e) == 0 {
		return nil
	}
	return e
}

// Error lists the fields in order, so the same errors always read the same.
func (e Errors) Error() string {
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
		if f != All {
			b.WriteString(f + ": ")
		}
		b.WriteString(strings.Join(e[f], " "))
	}
	return b.String()
}
