package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/anvilmetal/anvil/internal/client"
)

// table prints aligned columns, two spaces apart. Unlike text/tabwriter it
// remembers its column widths between rows, so rows streamed later (events
// --follow) line up with the ones printed before them; fit the rows you
// already have first and the result matches tabwriter's.
type table struct {
	w      io.Writer
	indent string // printed before every row
	widths []int
}

// fit widens the columns to hold rows, without printing them.
func (t *table) fit(rows ...[]string) {
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(t.widths) {
				t.widths = append(t.widths, 0)
			}
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(clean(cell)))
		}
	}
}

// row prints one row, widening columns first if it needs more room.
func (t *table) row(cells ...string) {
	t.fit(cells)
	var b strings.Builder
	b.WriteString(t.indent)
	for i, cell := range cells {
		cell = clean(cell)
		b.WriteString(cell)
		if i < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", t.widths[i]-utf8.RuneCountInString(cell)+2))
		}
	}
	fmt.Fprintln(t.w, strings.TrimRight(b.String(), " "))
}

// printTable prints a header (unless nil) and rows, aligned over all of
// them, and returns the table for rows to come.
func printTable(w io.Writer, indent string, header []string, rows [][]string) *table {
	t := &table{w: w, indent: indent}
	t.fit(header)
	t.fit(rows...)
	if header != nil {
		t.row(header...)
	}
	for _, r := range rows {
		t.row(r...)
	}
	return t
}

// clean makes server-supplied text safe for one table cell: tabs and
// newlines would break the layout, and escape sequences could rewrite the
// user's terminal. Empty cells show as "-" so columns stay readable.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if s = strings.TrimSpace(s); s == "" {
		return "-"
	}
	return s
}

// printJSON prints the server's JSON as it sent it, indented.
func printJSON(w io.Writer, raw json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return fmt.Errorf("server sent invalid JSON: %w", err)
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// printJSONList prints several of the server's values as one JSON array.
func printJSONList(w io.Writer, raws []json.RawMessage) error {
	if raws == nil {
		raws = []json.RawMessage{} // "[]", not "null"
	}
	b, err := json.Marshal(raws)
	if err != nil {
		return fmt.Errorf("server sent invalid JSON: %w", err)
	}
	return printJSON(w, b)
}

// summary is the one line that action commands print: hostname, status
// and power, then the status message when it says more than the status
// ("power it on now", why a deploy failed).
func summary(m client.Machine) string {
	s := fmt.Sprintf("%s (%s): %s, power %s", clean(m.Hostname), clean(m.SystemID),
		clean(m.StatusName), clean(m.PowerState))
	if msg := clean(m.StatusMessage); msg != "-" && msg != clean(m.StatusName) {
		s += ": " + msg
	}
	return s
}

// gib shows MiB as GiB without trailing zeros: 8192 → "8 GiB", 1536 → "1.5 GiB".
func gib(mib int64) string {
	if mib == 0 {
		return "-"
	}
	return strings.TrimSuffix(strconv.FormatFloat(float64(mib)/1024, 'f', 1, 64), ".0") + " GiB"
}
