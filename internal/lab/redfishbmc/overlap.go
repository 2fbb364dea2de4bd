package redfishbmc

import (
	"sort"

	"github.com/anvilmetal/anvil/internal/lab"
)

// Overlap returns two entries of a service's log whose commands were in
// flight at the same time, if any: a test gives it the log of one service
// to prove that Anvil serialised the commands it sent there.
func Overlap(entries []lab.LogEntry) (a, b lab.LogEntry, found bool) {
	e := append([]lab.LogEntry(nil), entries...)
	sort.Slice(e, func(i, j int) bool { return e[i].Start.Before(e[j].Start) })
	last := 0 // of the entries so far, the one that ends latest
	for i := 1; i < len(e); i++ {
		if e[i].Start.Before(e[last].End) {
			return e[last], e[i], true
		}
		if e[i].End.After(e[last].End) {
			last = i
		}
	}
	return lab.LogEntry{}, lab.LogEntry{}, false
}
