package scripts

import (
	"embed"
	"fmt"
	"sort"
)

//go:embed builtin
var builtinFS embed.FS

// Builtin is a script that ships with Anvil (MAAS's default scripts).
type Builtin struct {
	Script
	Text []byte
}

// Builtins returns the shipped scripts by name, each read through Apply
// like an upload: a broken one is a programming error.
func Builtins() []Builtin {
	ents, err := builtinFS.ReadDir("builtin")
	if err != nil {
		panic(err)
	}
	var out []Builtin
	for _, e := range ents {
		text, err := builtinFS.ReadFile("builtin/" + e.Name())
		if err != nil {
			panic(err)
		}
		s, errs := Apply(nil, false, Form{Fields: map[string]string{}, Script: text, HasScript: true})
		if errs.Err() != nil {
			panic(fmt.Sprintf("built-in script %s: %v", e.Name(), errs))
		}
		out = append(out, Builtin{Script: s, Text: text})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names of built-in scripts the environment treats specially.
const (
	LSHW      = "00-maas-01-lshw"          // its output is the XML tags are evaluated over
	Inventory = "50-maas-01-commissioning" // the agent's own inventory
)
