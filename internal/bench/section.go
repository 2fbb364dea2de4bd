package bench

import (
	"fmt"
	"os"
	"strings"
)

// WriteSection replaces the text between the markers
// "<!-- bench:NAME -->" and "<!-- /bench:NAME -->" in the Markdown file
// at path with body, keeping the markers, so that a scenario can rewrite
// its own figures in BENCHMARKS.md and leave the rest alone.
func WriteSection(path, name, body string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s, err := replaceSection(string(b), name, body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

func replaceSection(doc, name, body string) (string, error) {
	open, end := "<!-- bench:"+name+" -->", "<!-- /bench:"+name+" -->"
	i := strings.Index(doc, open)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("no section %q (markers %s ... %s)", name, open, end)
	}
	if strings.Count(doc, open) != 1 || strings.Count(doc, end) != 1 {
		return "", fmt.Errorf("section %q is marked more than once", name)
	}
	body = strings.Trim(body, "\n")
	return doc[:i+len(open)] + "\n" + body + "\n" + doc[j:], nil
}
