package bootcfg

import (
	"fmt"
	"strings"
	"text/template"
)

// syntaxFuncs are the only way templates write a value: each one checks
// (or quotes) the value for the syntax it lands in and fails the render
// otherwise. Values were validated already; these catch a template or
// validation change that would let something through.
var syntaxFuncs = template.FuncMap{
	// ipxe is one word of an iPXE command: iPXE splits on whitespace,
	// expands ${...}, and treats ||, && and # specially.
	"ipxe": word(" \t$|&;#'\"\\`{}<>"),
	// ipxetext is the rest of an echo line: spaces are fine, expansion
	// and command separators are not.
	"ipxetext": word("$|&;#'\"\\`{}<>"),
	// pxe is one word of a PXELINUX KERNEL, INITRD or APPEND line.
	"pxe": word(" \t"),
	// text is free text on a line of its own: a comment, PXELINUX SAY.
	"text": word(""),
	// grub quotes a word for GRUB's shell lexer: inside single quotes
	// nothing is special but the closing quote, which cannot be escaped
	// and so is refused.
	"grub": func(s string) (string, error) {
		if _, err := word("'")(s); err != nil {
			return "", err
		}
		return "'" + s + "'", nil
	},
}

// word returns a checker refusing empty values, control characters
// (newlines above all: a value must never start a line of its own),
// non-ASCII bytes and the given extra bytes.
func word(forbidden string) func(string) (string, error) {
	return func(s string) (string, error) {
		if s == "" {
			return "", fmt.Errorf("empty value")
		}
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < ' ' || c >= 0x7f || strings.IndexByte(forbidden, c) >= 0 {
				return "", fmt.Errorf("value %q has byte %#02x, not allowed here", s, c)
			}
		}
		return s, nil
	}
}
