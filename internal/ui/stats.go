package ui

import (
	"context"
	"html/template"
	"net/http"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/plot"
)

// sample is one point of the statistics plots, taken from the fleet's rows.
type sample struct {
	At       time.Time
	ByStatus map[machine.Status]int
	// Drifting counts machines whose power disagrees with what Anvil wants.
	Drifting int
	// BMCFailing counts machines whose last power reading failed.
	BMCFailing int
	// Sweep is how long ago the stalest reading of a machine the monitor
	// polls was taken: about one poll interval when every BMC answers,
	// longer when failing BMCs are polled less often. Machines whose power
	// cannot be queried (manual) are left out, whatever they once read.
	Sweep time.Duration
}

// sampleOf counts rows at now; polled says which power types the monitor
// polls.
func sampleOf(now time.Time, rows []*row, polled func(powerType string) bool) sample {
	s := sample{At: now, ByStatus: map[machine.Status]int{}}
	for _, r := range rows {
		s.ByStatus[r.Status]++
		if r.Drift {
			s.Drifting++
		}
		if r.Failures > 0 {
			s.BMCFailing++
		}
		if !r.ReadAt.IsZero() && polled(r.PowerType) {
			s.Sweep = max(s.Sweep, now.Sub(r.ReadAt))
		}
	}
	s.Sweep = s.Sweep.Round(time.Second)
	return s
}

// history keeps the last n samples in memory. Each region process keeps
// its own from when it started: plots answer "what is happening", and
// the event log remains the record.
type history struct {
	mu  sync.Mutex
	n   int
	buf []sample
}

func newHistory(n int) *history { return &history{n: n} }

func (h *history) add(s sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.buf) == h.n {
		copy(h.buf, h.buf[1:])
		h.buf = h.buf[:h.n-1]
	}
	h.buf = append(h.buf, s)
}

func (h *history) samples() []sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sample(nil), h.buf...)
}

// statsData is the statistics page: plots of the samples, plus the latest
// sample in figures for those who would rather read.
type statsData struct {
	Status, Sweep, BMC template.HTML
	Latest             *sample
	Samples            int
	Every              time.Duration
	Current            []statusCount
	// PollInterval is the power monitor's: what Sweep is when all is well.
	PollInterval time.Duration
}

// statusColours keep a status's colour stable across samples and pages.
var statusColours = map[machine.Status]string{
	machine.Ready: "#1a7f37", machine.Deployed: "#2da44e", machine.New: "#1f5fa8",
	machine.Commissioning: "#8250df", machine.Deploying: "#bf3989", machine.Releasing: "#9a6700",
	machine.DiskErasing: "#bc4c00", machine.Allocated: "#54aeff", machine.Broken: "#6e7781",
}

func (s *Server) statsData(ctx context.Context) statsData {
	ss := s.stats.samples()
	d := statsData{Samples: len(ss), Every: s.opts.SampleEvery, PollInterval: s.svc.PollInterval(ctx)}
	seen := map[machine.Status]bool{}
	for _, x := range ss {
		for st, n := range x.ByStatus {
			if n > 0 {
				seen[st] = true
			}
		}
	}
	var series []plot.Series
	for _, st := range machine.AllStatuses {
		if !seen[st] {
			continue
		}
		sr := plot.Series{Name: st.String(), Color: statusColours[st]}
		if st.Failed() {
			sr.Color = "#c4262e"
		}
		for _, x := range ss {
			sr.Points = append(sr.Points, plot.Point{T: x.At, V: float64(x.ByStatus[st])})
		}
		series = append(series, sr)
	}
	d.Status = plot.StackedArea(plot.Options{Title: "Machines by status", Unit: "machines", Width: 720, Height: 280}, series...)
	sweep := plot.Series{Name: "oldest power reading of a polled machine"}
	failing := plot.Series{Name: "BMCs failing", Color: "#c4262e"}
	drift := plot.Series{Name: "machines in drift", Color: "#9a6700"}
	for _, x := range ss {
		sweep.Points = append(sweep.Points, plot.Point{T: x.At, V: x.Sweep.Seconds()})
		failing.Points = append(failing.Points, plot.Point{T: x.At, V: float64(x.BMCFailing)})
		drift.Points = append(drift.Points, plot.Point{T: x.At, V: float64(x.Drifting)})
	}
	d.Sweep = plot.Lines(plot.Options{Title: "Power poll sweep: age of the oldest reading", Unit: "seconds", Width: 720, Height: 240}, sweep)
	d.BMC = plot.Lines(plot.Options{Title: "BMC failures and power drift", Unit: "machines", Width: 720, Height: 240}, failing, drift)
	if len(ss) > 0 {
		d.Latest = &ss[len(ss)-1]
		for _, st := range machine.AllStatuses {
			if n := d.Latest.ByStatus[st]; n > 0 {
				d.Current = append(d.Current, statusCount{st, n})
			}
		}
	}
	return d
}

// statsPage and statsLive show the plots.
func (s *Server) statsPage(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Title, v.Nav, v.Data = "Statistics", "stats", s.statsData(r.Context())
	return "stats.html", nil
}

func (s *Server) statsLive(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	v.Data = s.statsData(r.Context())
	return "stats_live.html", nil
}
