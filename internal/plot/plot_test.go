package plot

import (
	"encoding/xml"
	"errors"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func ramp(name string, n int, f func(i int) float64) Series {
	s := Series{Name: name}
	for i := range n {
		s.Points = append(s.Points, Point{T: at(i * 5), V: f(i)})
	}
	return s
}

// parsed is what a chart says, read back with encoding/xml.
type parsed struct {
	root  string
	texts []string // contents of <text> and <title>
	elems map[string]int
}

func parse(t *testing.T, out template.HTML) parsed {
	t.Helper()
	p := parsed{elems: map[string]int{}}
	d := xml.NewDecoder(strings.NewReader(string(out)))
	var stack []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, out)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if p.root == "" {
				p.root = tok.Name.Local
			}
			p.elems[tok.Name.Local]++
			stack = append(stack, tok.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && (stack[len(stack)-1] == "text" || stack[len(stack)-1] == "title") {
				p.texts = append(p.texts, string(tok))
			}
		}
	}
	if p.root != "svg" {
		t.Fatalf("root element %q, want svg", p.root)
	}
	if s := string(out); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
		t.Fatalf("non-finite coordinate in output:\n%s", s)
	}
	return p
}

func (p parsed) has(text string) bool { return slices.Contains(p.texts, text) }

func TestChartsAreWellFormed(t *testing.T) {
	hostile := `<script>alert("x")</script> & 'q' ]]> ` + "\x00\x07\uFFFE"
	cases := []struct {
		name string
		out  template.HTML
	}{
		{"lines", Lines(Options{Title: "Load", Unit: "req/s"}, ramp("a", 10, func(i int) float64 { return float64(i * i) }), ramp("b", 10, func(i int) float64 { return 50 }))},
		{"lines hostile", Lines(Options{Title: hostile, Unit: hostile}, ramp(hostile, 3, func(i int) float64 { return 1 }))},
		{"lines empty", Lines(Options{Title: hostile})},
		{"lines no points", Lines(Options{}, Series{Name: "x"})},
		{"lines only NaN", Lines(Options{}, Series{Name: "x", Points: []Point{{at(0), math.NaN()}, {at(1), math.Inf(1)}}})},
		{"lines single point", Lines(Options{}, Series{Name: "x", Points: []Point{{at(0), 3}}})},
		{"lines constant zero", Lines(Options{}, ramp("z", 5, func(int) float64 { return 0 }))},
		{"lines negative", Lines(Options{FitY: true}, ramp("n", 5, func(i int) float64 { return -float64(i) * 1e6 }))},
		{"stacked", StackedArea(Options{Title: "Machines"}, ramp("Ready", 4, func(int) float64 { return 3 }), ramp("Deployed", 4, func(i int) float64 { return float64(i) }))},
		{"stacked hostile", StackedArea(Options{}, ramp(hostile, 4, func(int) float64 { return 3 }))},
		{"stacked empty", StackedArea(Options{})},
		{"stacked single time", StackedArea(Options{}, ramp("a", 1, func(int) float64 { return 3 }), ramp("b", 1, func(int) float64 { return 2 }))},
		{"bars", Bars(Options{Title: "Per rack", Unit: "machines"}, Bar{"rack-1", 12, ""}, Bar{"rack-2", 0, ""}, Bar{"rack-3", -4, ""})},
		{"bars hostile", Bars(Options{Title: hostile}, Bar{Label: hostile, Value: 1})},
		{"bars empty", Bars(Options{})},
		{"bars only NaN", Bars(Options{}, Bar{Label: "x", Value: math.NaN()})},
		{"tiny", Lines(Options{Width: 20, Height: 10, Title: "t"}, ramp("a", 3, func(i int) float64 { return float64(i) }))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := parse(t, c.out)
			if p.elems["script"] != 0 || strings.Contains(string(c.out), "<script") {
				t.Errorf("unescaped markup in output:\n%s", c.out)
			}
		})
	}
}

func TestHostileNamesAreEscapedText(t *testing.T) {
	name := `<script>alert(1)</script>"onload="x`
	for _, out := range []template.HTML{
		Lines(Options{Title: name}, ramp(name, 3, func(int) float64 { return 1 })),
		StackedArea(Options{Title: name}, ramp(name, 3, func(int) float64 { return 1 })),
		Bars(Options{Title: name}, Bar{Label: name, Value: 1}),
	} {
		p := parse(t, out)
		if strings.Contains(string(out), "<script") || strings.Contains(string(out), `"onload`) {
			t.Errorf("hostile name reached the markup unescaped:\n%s", out)
		}
		if !p.has(name) {
			t.Errorf("name not shown as text; texts %q", p.texts)
		}
	}
}

func TestColorOverrideIsValidated(t *testing.T) {
	out := string(Lines(Options{},
		Series{Name: "a", Color: "#123abc", Points: []Point{{at(0), 1}, {at(1), 2}}},
		Series{Name: "b", Color: `red" onload="alert(1)`, Points: []Point{{at(0), 1}, {at(1), 2}}}))
	if !strings.Contains(out, `stroke="#123abc"`) {
		t.Error("valid colour not used")
	}
	if strings.Contains(out, "onload") || !strings.Contains(out, `stroke="`+Palette[1]+`"`) {
		t.Errorf("invalid colour not replaced by the palette's:\n%s", out)
	}
}

func TestEmpty(t *testing.T) {
	for _, out := range []template.HTML{
		Lines(Options{}),
		Lines(Options{}, Series{Name: "nothing"}),
		StackedArea(Options{}, Series{Name: "nothing", Points: []Point{{at(0), math.NaN()}}}),
		Bars(Options{}),
	} {
		p := parse(t, out)
		if !p.has("No data yet") {
			t.Errorf("empty chart without its message; texts %q", p.texts)
		}
		if p.elems["path"] != 0 {
			t.Errorf("empty chart draws data paths:\n%s", out)
		}
	}
	p := parse(t, Lines(Options{Empty: "Waiting for the first sample", Title: "Boots"}))
	if !p.has("Waiting for the first sample") || !p.has("Boots") {
		t.Errorf("custom empty text or title missing; texts %q", p.texts)
	}
}

func TestSinglePoint(t *testing.T) {
	p := parse(t, Lines(Options{}, Series{Name: "x", Points: []Point{{at(0), 3}}}))
	if p.elems["circle"] != 1 {
		t.Errorf("single point: %d circles, want 1", p.elems["circle"])
	}
	if !p.has("10:00") {
		t.Errorf("single point's time not labelled; texts %q", p.texts)
	}
	p = parse(t, StackedArea(Options{}, ramp("a", 1, func(int) float64 { return 3 }), ramp("b", 1, func(int) float64 { return 2 })))
	if p.elems["rect"] < 2+2 { // two legend swatches, two stacked pieces
		t.Errorf("single-time stacked chart: %d rects", p.elems["rect"])
	}
	if !p.has("5") {
		t.Errorf("value axis does not reach the total 5; texts %q", p.texts)
	}
}

func TestConstantSeries(t *testing.T) {
	p := parse(t, Lines(Options{}, ramp("c", 6, func(int) float64 { return 7 })))
	if !p.has("0") || !p.has("8") || p.has("10") {
		t.Errorf("constant 7: want an axis from 0 to 8; texts %q", p.texts)
	}
	p = parse(t, Lines(Options{FitY: true}, ramp("c", 6, func(int) float64 { return 7 })))
	if p.has("0") || !p.has("7.0") {
		t.Errorf("constant 7 with FitY: want an axis around 7 without 0; texts %q", p.texts)
	}
	p = parse(t, Lines(Options{}, ramp("z", 6, func(int) float64 { return 0 })))
	if !p.has("0") || !p.has("1.0") {
		t.Errorf("constant 0: want an axis from 0 to 1; texts %q", p.texts)
	}
}

func TestNiceTicks(t *testing.T) {
	cases := []struct {
		lo, hi   float64
		max      int
		step     float64
		from, to float64
	}{
		{0, 7, 5, 2, 0, 8},
		{0, 10, 5, 2, 0, 10},
		{0, 100, 5, 20, 0, 100},
		{0, 101, 5, 50, 0, 150},
		{0, 0.3, 3, 0.1, 0, 0.3},
		{-3, 7, 5, 2, -4, 8},
		{0, 0, 5, 0.2, 0, 1},
		{1234, 5678, 4, 2000, 0, 6000},
		{0.001, 0.0042, 4, 0.001, 0.001, 0.005},
		{0, 1e9, 5, 2e8, 0, 1e9},
	}
	for _, c := range cases {
		ticks, step, from, to := niceTicks(c.lo, c.hi, c.max)
		if !close(step, c.step) || !close(from, c.from) || !close(to, c.to) {
			t.Errorf("niceTicks(%v, %v, %d) = step %v over [%v, %v], want %v over [%v, %v]",
				c.lo, c.hi, c.max, step, from, to, c.step, c.from, c.to)
			continue
		}
		if len(ticks) > c.max+2 {
			t.Errorf("niceTicks(%v, %v, %d): %d ticks", c.lo, c.hi, c.max, len(ticks))
		}
		for i, v := range ticks {
			m := v / step
			if !close(m, math.Round(m)) || (i > 0 && !close(v-ticks[i-1], step)) {
				t.Errorf("niceTicks(%v, %v, %d): tick %v is off the grid of %v", c.lo, c.hi, c.max, v, step)
			}
		}
		first := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9))
		if !slices.ContainsFunc([]float64{1, 2, 5}, func(m float64) bool { return close(m, first) }) {
			t.Errorf("step %v is not 1, 2 or 5 times a power of ten", step)
		}
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

func TestValueFormat(t *testing.T) {
	cases := []struct {
		step, maxAbs, v float64
		want            string
	}{
		{5000, 15000, 15000, "15k"},
		{5000, 15000, 0, "0"},
		{2e5, 1e6, 600000, "0.6M"},
		{0.1, 0.5, 0.3, "0.3"},
		{0.02, 0.1, 0.04, "0.04"},
		{2, 8, 4, "4"},
		{2, 8, -4, "-4"},
		{5e8, 2e9, 1.5e9, "1.5G"},
	}
	for _, c := range cases {
		if got := newValueFormat(c.step, c.maxAbs).format(c.v); got != c.want {
			t.Errorf("format(%v) with step %v = %q, want %q", c.v, c.step, got, c.want)
		}
	}
	for v, want := range map[float64]string{3: "3", 2.5: "2.5", 1.0 / 3: "0.33", 12345: "12.35k", -7: "-7", 0: "0"} {
		if got := formatValue(v); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	labels := func(ticks []timeTick) []string {
		var out []string
		for _, tk := range ticks {
			out = append(out, tk.label)
		}
		return out
	}
	cases := []struct {
		name     string
		from, to time.Time
		max      int
		loc      *time.Location
		want     []string
	}{
		{"an hour", at(0), at(60), 6, time.UTC, []string{"10:00", "10:10", "10:20", "10:30", "10:40", "10:50", "11:00"}},
		{"unaligned start", at(3), at(47), 3, time.UTC, []string{"10:15", "10:30", "10:45"}},
		{"seconds", t0, t0.Add(30 * time.Second), 3, time.UTC, []string{"10:00:00", "10:00:10", "10:00:20", "10:00:30"}},
		{"three days", t0, t0.Add(72 * time.Hour), 4, time.UTC, []string{"Dec 3", "Dec 4", "Dec 5"}},
		{"two days, 12h", t0, t0.Add(40 * time.Hour), 4, time.UTC, []string{"12:00", "Dec 3", "12:00", "Dec 4"}},
		{"a day exactly is times", at(0), at(24 * 60), 4, time.UTC, []string{"12:00", "18:00", "00:00", "06:00"}},
		{"months", t0, t0.AddDate(0, 5, 0), 6, time.UTC, []string{"Jan 2027", "Feb 2027", "Mar 2027", "Apr 2027", "May 2027"}},
		{"time zone", at(0), at(60), 2, time.FixedZone("X", 90*60), []string{"11:30", "12:00", "12:30"}},
	}
	for _, c := range cases {
		got := labels(timeTicks(c.from, c.to, c.loc, c.max))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: labels %q, want %q", c.name, got, c.want)
		}
	}
}

func TestStackTotals(t *testing.T) {
	a := Series{Name: "a", Points: []Point{{at(0), 1}, {at(10), 2}, {at(20), 3}}}
	b := Series{Name: "b", Points: []Point{{at(10), 10}, {at(20), 20}, {at(20), 25}}} // a repeated time: last wins
	c := Series{Name: "c", Points: []Point{{at(20), 100}, {at(0), -5}, {at(5), 7}}}   // unsorted, negative
	times, cum := stack(clean([]Series{a, b, c}))
	wantTimes := []time.Time{at(0), at(5), at(10), at(20)}
	if !slices.EqualFunc(times, wantTimes, time.Time.Equal) {
		t.Fatalf("times %v, want %v", times, wantTimes)
	}
	want := [][]float64{
		{1, 0, 2, 3},
		{1, 0, 12, 28},
		{1, 7, 12, 128},
	}
	for i := range want {
		if !slices.Equal(cum[i], want[i]) {
			t.Errorf("running total through series %d = %v, want %v", i, cum[i], want[i])
		}
	}
	p := parse(t, StackedArea(Options{}, a, b, c))
	top := 0.0
	for _, s := range p.texts {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			top = max(top, v)
		}
	}
	if top < 128 || top > 200 {
		t.Errorf("value axis ends at %v for a total of 128; texts %q", top, p.texts)
	}
	if got := p.elems["path"]; got != 6 { // an area and its top edge per series
		t.Errorf("%d paths, want 6", got)
	}
	for _, name := range []string{"a", "b", "c"} {
		if !p.has(name) {
			t.Errorf("legend lacks %q", name)
		}
	}
}

func TestCallerDataUntouched(t *testing.T) {
	s := Series{Name: "s", Points: []Point{{at(10), 1}, {at(0), 2}}}
	Lines(Options{}, s)
	StackedArea(Options{}, s)
	if !s.Points[0].T.Equal(at(10)) {
		t.Error("rendering sorted the caller's points")
	}
}

func TestBars(t *testing.T) {
	out := Bars(Options{Title: "Machines per rack", Width: 400},
		Bar{Label: "rack-a", Value: 12}, Bar{Label: "rack-b", Value: 3.5}, Bar{Label: "rack-c", Value: -2})
	p := parse(t, out)
	for _, want := range []string{"Machines per rack", "rack-a", "rack-b", "rack-c", "12", "3.5", "-2"} {
		if !p.has(want) {
			t.Errorf("missing text %q; texts %q", want, p.texts)
		}
	}
	if p.elems["rect"] != 3 {
		t.Errorf("%d rects, want 3 bars", p.elems["rect"])
	}
	if !strings.Contains(string(out), `width="400"`) {
		t.Error("width option ignored")
	}
}
