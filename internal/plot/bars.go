package plot

import (
	"html/template"
	"math"
)

// Bars draws one horizontal bar per category, in the order given, with its
// value at the bar's end. Horizontal bars keep long category names readable.
// Without Options.Height the height follows the number of bars.
func Bars(o Options, bars ...Bar) template.HTML {
	var kept []Bar
	for _, b := range bars {
		if !math.IsNaN(b.Value) && !math.IsInf(b.Value, 0) {
			kept = append(kept, b)
		}
	}
	const row, barH = 26.0, 18.0
	head := 4.0
	if o.Title != "" {
		head = titleSize + 12
	}
	if o.Unit != "" {
		head += lineHeight
	}
	if o.Height <= 0 {
		o.Height = int(head + 6 + row*float64(max(len(kept), 1)) + 28)
	}
	if len(kept) == 0 {
		return empty(o, 640, 0)
	}
	w, h := o.size(640, 0)
	s := newSVG(w, h, o.Title)
	top := s.title(w, o.Title)
	top = s.unit(top, o.Unit)
	top += 6

	lo, hi := 0.0, 0.0
	labelW, valueW := 0.0, 0.0
	maxLabel := max(4, int(float64(w)*0.35/charWidth))
	for _, b := range kept {
		lo, hi = min(lo, b.Value), max(hi, b.Value)
		labelW = max(labelW, textWidth(cut(b.Label, min(maxLabel, maxName))))
		valueW = max(valueW, textWidth(formatValue(b.Value)))
	}
	left, right := 8+labelW+8, float64(w)-8-valueW-6
	bottom := float64(h) - 24
	ticks, step, nlo, nhi := niceTicks(lo, hi, max(1, int((right-left)/80)))
	x := func(v float64) float64 { return left + (right-left)*(v-nlo)/(nhi-nlo) }

	vf := newValueFormat(step, max(math.Abs(nlo), math.Abs(nhi)))
	for _, v := range ticks {
		opacity := "0.12"
		if v == 0 {
			opacity = "0.5"
		}
		s.raw(`<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="currentColor" stroke-opacity="%s"/>`,
			num(x(v)), num(x(v)), num(top), num(bottom), opacity)
		s.text(x(v), bottom+17, "middle", vf.format(v), "")
	}
	rowH := min(row, (bottom-top)/float64(len(kept)))
	for i, b := range kept {
		y := top + rowH*float64(i)
		mid := y + rowH/2
		x0, x1 := x(0), x(b.Value)
		s.raw(`<g><title>%s: %s</title>`, esc(b.Label), esc(formatValue(b.Value)))
		s.text(left-8, mid+fontSize/3, "end", cut(b.Label, min(maxLabel, maxName)), "")
		s.raw(`<rect x="%s" y="%s" width="%s" height="%s" rx="2" fill="%s"/>`,
			num(min(x0, x1)), num(mid-min(barH, rowH-4)/2), num(math.Abs(x1-x0)), num(min(barH, rowH-4)), color(b.Color, 0))
		// A negative bar's value sits right of zero, where its row is free.
		s.text(max(x0, x1)+5, mid+fontSize/3, "start", formatValue(b.Value), "")
		s.raw(`</g>`)
	}
	return s.html()
}
