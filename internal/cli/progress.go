package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/term"
)

// isTerminal says whether w is a terminal; progress lines go only there,
// so that logs and pipes get the result alone. Tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress redraws one line ("Uploading x: 42% (...)") on a terminal, at
// most every interval, and prints nothing anywhere else.
type progress struct {
	w        io.Writer // nil when not a terminal
	what     string
	total    int64
	base     int64 // bytes done before this run (a resumed upload), not counted in the rate
	start    time.Time
	last     time.Time
	interval time.Duration
	now      func() time.Time
}

func newProgress(w io.Writer, what string, total int64) *progress {
	p := &progress{what: what, total: total, interval: 200 * time.Millisecond, now: time.Now}
	if isTerminal(w) {
		p.w = w
	}
	p.start = p.now()
	return p
}

// update shows done bytes of the total, unless it showed a line too
// recently; the last update (done == total) always shows.
func (p *progress) update(done int64) {
	if p.w == nil {
		return
	}
	now := p.now()
	if done < p.total && now.Sub(p.last) < p.interval {
		return
	}
	p.last = now
	pct := 100 * float64(done) / float64(max(p.total, 1))
	line := fmt.Sprintf("%s: %3.0f%% (%s of %s", p.what, pct, byteSize(done), byteSize(p.total))
	if secs := now.Sub(p.start).Seconds(); secs > 0.5 {
		line += ", " + byteSize(int64(float64(done-p.base)/secs)) + "/s"
	}
	// \r and erase-to-end redraw the line in place.
	fmt.Fprintf(p.w, "\r\x1b[K%s)", line)
}

// end finishes the line, so what follows starts on its own.
func (p *progress) end() {
	if p.w != nil && !p.last.IsZero() {
		fmt.Fprintln(p.w)
	}
}

// byteSize shows a byte count in binary units: 512 B, 1.5 KiB, 3.2 GiB.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + string("KMGTPE"[exp]) + "iB"
}
