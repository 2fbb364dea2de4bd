package storage

import (
	"sort"
	"strings"
)

// FieldErrors are validation errors in MAAS's form shape: field → messages;
// "__all__" holds the ones that belong to no single field.
type FieldErrors map[string][]string

// Add records msg against field.
func (e FieldErrors) Add(field, msg string) { e[field] = append(e[field], msg) }

// Err returns e as an error, or nil when it holds nothing.
func (e FieldErrors) Err() error {
	if len(e) == 0 {
		return nil
	}
	return e
}

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
		if f != "__all__" {
			b.WriteString(f + ": ")
		}
		b.WriteString(strings.Join(e[f], " "))
	}
	return b.String()
}
