package scripts

import (
	"fmt"
	"regexp"
	"strconv"
)

// Badblocks is what one badblocks pass found.
type Badblocks struct {
	Bad, Read, Write, Comparison int64
}

// Failed says the disk did not pass: badblocks exits 0 whatever it finds,
// so MAAS fails the test on any bad block or error.
func (b Badblocks) Failed() bool { return b.Bad+b.Read+b.Write+b.Comparison != 0 }

var passLine = regexp.MustCompile(`(?m)^Pass completed, (\d+) bad blocks found\. \((\d+)/(\d+)/(\d+) errors\)\s*$`)

// ParseBadblocks reads badblocks -v output (its summary line); output
// without one (badblocks stopped early) is an error.
func ParseBadblocks(out []byte) (Badblocks, error) {
	m := passLine.FindSubmatch(out)
	if m == nil {
		return Badblocks{}, fmt.Errorf("badblocks: no \"Pass completed\" line in its output")
	}
	var n [4]int64
	for i := range n {
		v, err := strconv.ParseInt(string(m[i+1]), 10, 64)
		if err != nil {
			return Badblocks{}, fmt.Errorf("badblocks: count %q: %w", m[i+1], err)
		}
		n[i] = v
	}
	return Badblocks{Bad: n[0], Read: n[1], Write: n[2], Comparison: n[3]}, nil
}

// Results is the result YAML's "results" MAAS's badblocks test writes.
func (b Badblocks) Results() map[string]any {
	return map[string]any{"badblocks": b.Bad, "read_errors": b.Read, "write_errors": b.Write, "comparison_errors": b.Comparison}
}
