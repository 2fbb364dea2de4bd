package bench

import "testing"

func TestReplaceSection(t *testing.T) {
	doc := "# B\n\n<!-- bench:x -->\nold\n<!-- /bench:x -->\n\ntail\n"
	got, err := replaceSection(doc, "x", "new\nlines\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# B\n\n<!-- bench:x -->\nnew\nlines\n<!-- /bench:x -->\n\ntail\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, err := replaceSection(doc, "y", "z"); err == nil {
		t.Fatal("a missing section was replaced")
	}
}
