// Package yamlq quotes strings for the YAML Anvil writes by hand (cloud-init
// seeds, network configurations), so no value can end a scalar, start a
// new key or be folded by a YAML reader.
package yamlq

import (
	"fmt"
	"strings"
)

// Quote writes s as a YAML double-quoted scalar.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r >= 0x7f && r <= 0xffff:
			// Beyond ASCII YAML has line breaks (U+0085, U+2028) that
			// a quoted scalar folds; escape everything there.
			fmt.Fprintf(&b, "\\u%04x", r)
		case r > 0xffff:
			fmt.Fprintf(&b, "\\U%08x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
