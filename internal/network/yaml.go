package network

import (
	"fmt"
	"github.com/anvilmetal/anvil/internal/yamlq"
	"strconv"
	"strings"
)

// A small YAML writer for the network-config: ordered maps, lists and
// scalars, every string value double-quoted (JSON's quoting is YAML's) and
// every key that could read as something else too, so a name like "no" or
// "1" stays a string to PyYAML and libyaml alike; the output is the same
// bytes for the same model.
type (
	ymap []ykv
	ykv  struct {
		k string
		v any // ymap, []any, string, int, bool
	}
	ylist []any
)

func (m *ymap) set(k string, v any) { *m = append(*m, ykv{k, v}) }

// key writes k plain when YAML 1.1 and 1.2 both read it unquoted as the
// same string (a letter or _, then letters, digits, _ . -), and quoted
// otherwise ("no", "1", "on", "a b").
func key(k string) string {
	switch strings.ToLower(k) {
	case "", "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return yamlq.Quote(k)
	}
	for i, c := range []byte(k) {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '.' || c == '-')) {
			return yamlq.Quote(k)
		}
	}
	return k
}

func writeYAML(b *strings.Builder, v any, indent int) {
	pad := strings.Repeat("  ", indent)
	switch v := v.(type) {
	case ymap:
		for _, kv := range v {
			b.WriteString(pad + key(kv.k) + ":")
			writeValue(b, kv.v, indent)
		}
	case ylist:
		for _, e := range v {
			b.WriteString(pad + "-")
			if m, ok := e.(ymap); ok && len(m) > 0 {
				// The first key shares the dash's line.
				b.WriteString(" " + key(m[0].k) + ":")
				writeValue(b, m[0].v, indent+1)
				writeYAML(b, m[1:], indent+1)
				continue
			}
			writeValue(b, e, indent)
		}
	}
}

func writeValue(b *strings.Builder, v any, indent int) {
	switch v := v.(type) {
	case ymap:
		if len(v) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteString("\n")
		writeYAML(b, v, indent+1)
	case ylist:
		if len(v) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteString("\n")
		writeYAML(b, v, indent+1)
	case string:
		b.WriteString(" " + yamlq.Quote(v) + "\n")
	case int:
		b.WriteString(" " + strconv.Itoa(v) + "\n")
	case bool:
		b.WriteString(" " + strconv.FormatBool(v) + "\n")
	default:
		panic(fmt.Sprintf("network: no YAML for %T", v))
	}
}
