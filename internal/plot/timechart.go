package plot

import (
	"html/template"
	"math"
	"slices"
	"strings"
	"time"
)

// Lines draws each series as a line over time. A series with one point is
// drawn as a dot.
func Lines(o Options, series ...Series) template.HTML {
	series = clean(series)
	if len(series) == 0 {
		return empty(o, 640, 240)
	}
	var t0, t1 time.Time
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range series {
		if i == 0 || s.Points[0].T.Before(t0) {
			t0 = s.Points[0].T
		}
		if last := s.Points[len(s.Points)-1].T; i == 0 || last.After(t1) {
			t1 = last
		}
		for _, p := range s.Points {
			lo, hi = min(lo, p.V), max(hi, p.V)
		}
	}
	c, s := layoutTime(o, series, t0, t1, lo, hi)
	for i, se := range series {
		col := color(se.Color, i)
		s.raw(`<g><title>%s</title>`, esc(se.Name))
		if len(se.Points) == 1 {
			p := se.Points[0]
			s.raw(`<circle cx="%s" cy="%s" r="3.5" fill="%s"/>`, num(c.x(p.T)), num(c.y(p.V)), col)
		} else {
			var d strings.Builder
			for j, p := range se.Points {
				d.WriteString(pathStep(j, c.x(p.T), c.y(p.V)))
			}
			s.raw(`<path d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"/>`, d.String(), col)
		}
		s.raw(`</g>`)
	}
	return s.html()
}

// StackedArea stacks the series over time, the first at the bottom, so the
// top edge is the total: for example machines by status. The series are
// taken at the union of their times; a series without a point at one of
// them counts 0 there, and negative values count as 0.
func StackedArea(o Options, series ...Series) template.HTML {
	series = clean(series)
	if len(series) == 0 {
		return empty(o, 640, 240)
	}
	times, cum := stack(series)
	total := cum[len(cum)-1]
	c, s := layoutTime(o, series, times[0], times[len(times)-1], 0, slices.Max(total))
	for i, se := range series {
		col := color(se.Color, i)
		top := cum[i]
		bottom := make([]float64, len(times))
		if i > 0 {
			bottom = cum[i-1]
		}
		s.raw(`<g><title>%s</title>`, esc(se.Name))
		if len(times) == 1 {
			// One instant has no width; draw it as a narrow stacked bar.
			x := c.x(times[0])
			s.raw(`<rect x="%s" y="%s" width="8" height="%s" fill="%s"/>`,
				num(x-4), num(c.y(top[0])), num(c.y(bottom[0])-c.y(top[0])), col)
		} else {
			var d, edge strings.Builder
			for j, t := range times {
				d.WriteString(pathStep(j, c.x(t), c.y(top[j])))
				edge.WriteString(pathStep(j, c.x(t), c.y(top[j])))
			}
			for j := len(times) - 1; j >= 0; j-- {
				d.WriteString(" L" + num(c.x(times[j])) + " " + num(c.y(bottom[j])))
			}
			d.WriteString(" Z")
			s.raw(`<path d="%s" fill="%s" fill-opacity="0.75"/>`, d.String(), col)
			s.raw(`<path d="%s" fill="none" stroke="%s" stroke-width="1.5" stroke-linejoin="round"/>`, edge.String(), col)
		}
		s.raw(`</g>`)
	}
	return s.html()
}

// pathStep is the i-th vertex of an SVG path: a move for the first, a line
// for the rest.
func pathStep(i int, x, y float64) string {
	if i == 0 {
		return "M" + num(x) + " " + num(y)
	}
	return " L" + num(x) + " " + num(y)
}

// stack returns the union of the series' times and, for each series, the
// running total up to and including it at each of those times.
func stack(series []Series) ([]time.Time, [][]float64) {
	var times []time.Time
	for _, s := range series {
		for _, p := range s.Points {
			times = append(times, p.T)
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	times = slices.CompactFunc(times, time.Time.Equal)
	cum := make([][]float64, len(series))
	for i, s := range series {
		cum[i] = make([]float64, len(times))
		if i > 0 {
			copy(cum[i], cum[i-1])
		}
		// Both are sorted: walk them together. A repeated time keeps its
		// last value.
		j := 0
		for k, t := range times {
			var v float64
			for j < len(s.Points) && !s.Points[j].T.After(t) {
				if s.Points[j].T.Equal(t) {
					v = max(s.Points[j].V, 0)
				}
				j++
			}
			cum[i][k] += v
		}
	}
	return times, cum
}

// clean drops non-finite values and empty series and sorts points by
// time, without touching the caller's slices.
func clean(series []Series) []Series {
	var out []Series
	for _, s := range series {
		pts := make([]Point, 0, len(s.Points))
		for _, p := range s.Points {
			if !math.IsNaN(p.V) && !math.IsInf(p.V, 0) {
				pts = append(pts, p)
			}
		}
		if len(pts) == 0 {
			continue
		}
		slices.SortStableFunc(pts, func(a, b Point) int { return a.T.Compare(b.T) })
		s.Points = pts
		out = append(out, s)
	}
	return out
}

// timeChart maps times and values to the plot area.
type timeChart struct {
	left, right, top, bottom float64
	t0, t1                   time.Time
	lo, hi                   float64
}

func (c timeChart) x(t time.Time) float64 {
	return c.left + (c.right-c.left)*float64(t.Sub(c.t0))/float64(c.t1.Sub(c.t0))
}

func (c timeChart) y(v float64) float64 {
	return c.bottom - (c.bottom-c.top)*(v-c.lo)/(c.hi-c.lo)
}

// layoutTime draws everything but the data: title, legend, unit, grid and
// axes, for times [t0, t1] and values [lo, hi].
func layoutTime(o Options, series []Series, t0, t1 time.Time, lo, hi float64) (timeChart, *svg) {
	w, h := o.size(640, 240)
	s := newSVG(w, h, o.Title)
	top := s.title(w, o.Title)
	var entries []legendEntry
	for i, se := range series {
		entries = append(entries, legendEntry{name: se.Name, color: color(se.Color, i)})
	}
	if len(series) > 1 || series[0].Name != "" {
		top = s.legend(w, top, entries)
	}
	top = s.unit(top, o.Unit)
	top += 6 // room for the top tick's label, centred on its line

	if !o.FitY {
		lo, hi = min(lo, 0), max(hi, 0)
	}
	bottom := float64(h) - 24
	ticks, step, nlo, nhi := niceTicks(lo, hi, max(2, int((bottom-top)/36)))
	vf := newValueFormat(step, max(math.Abs(nlo), math.Abs(nhi)))
	labels := make([]string, len(ticks))
	labelW := 0.0
	for i, v := range ticks {
		labels[i] = vf.format(v)
		labelW = max(labelW, textWidth(labels[i]))
	}

	if !t1.After(t0) {
		t0, t1 = t0.Add(-5*time.Minute), t1.Add(5*time.Minute)
	}
	c := timeChart{left: 10 + labelW + 6, right: float64(w) - 24, top: top, bottom: bottom,
		t0: t0, t1: t1, lo: nlo, hi: nhi}

	for i, v := range ticks {
		y := c.y(v)
		opacity := "0.12"
		if v == 0 {
			opacity = "0.5"
		}
		s.raw(`<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="currentColor" stroke-opacity="%s"/>`,
			num(c.left), num(c.right), num(y), num(y), opacity)
		s.text(c.left-6, y+fontSize/3, "end", labels[i], "")
	}
	s.raw(`<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="currentColor" stroke-opacity="0.5"/>`,
		num(c.left), num(c.right), num(c.bottom), num(c.bottom))

	loc := o.Location
	if loc == nil {
		loc = series[0].Points[0].T.Location()
	}
	for _, tk := range timeTicks(t0, t1, loc, max(1, int((c.right-c.left)/90))) {
		x := c.x(tk.t)
		s.raw(`<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="currentColor" stroke-opacity="0.5"/>`,
			num(x), num(x), num(c.bottom), num(c.bottom+4))
		s.text(x, c.bottom+17, "middle", tk.label, "")
	}
	return c, s
}
