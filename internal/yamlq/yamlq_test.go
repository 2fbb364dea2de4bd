package yamlq

import "testing"

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"web-1":          `"web-1"`,
		`a "b" \c`:       `"a \"b\" \\c"`,
		"line\nkey: x":   `"line\x0akey: x"`,
		"next\u0085line": `"next\u0085line"`,
		"sep\u2028":      `"sep\u2028"`,
		"\U0001F600":     `"\U0001f600"`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
