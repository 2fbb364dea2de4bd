// Package plot renders small SVG charts on the server, for pages that should
// show a chart without shipping a charting library to the browser.
//
// Every function returns a complete <svg> element, well-formed XML, ready to
// place in an html/template page. Names and labels are escaped, so they may
// come from user data. Text and axes are drawn in currentColor, so a chart
// takes the colour of the text around it (a dark theme included).
//
//	svg := plot.StackedArea(plot.Options{Title: "Machines by status", Unit: "machines"},
//		plot.Series{Name: "Deployed", Points: deployed},
//		plot.Series{Name: "Ready", Points: ready})
package plot

import (
	"encoding/xml"
	"fmt"
	"html/template"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Point is one sample of a time series.
type Point struct {
	T time.Time
	V float64
}

// Series is a named time series. Points need not be sorted; NaN and
// infinite values are left out.
type Series struct {
	Name   string
	Points []Point
	// Color overrides the palette colour: "#rgb" or "#rrggbb" only; anything
	// else is ignored, so it may come from configuration.
	Color string
}

// Bar is one category of a bar chart.
type Bar struct {
	Label string
	Value float64
	Color string // as Series.Color
}

// Options are shared by all charts. The zero value is usable.
type Options struct {
	Width, Height int    // pixels; default 640x240 (Bars: height from the number of bars)
	Title         string // drawn above the chart and used as its accessible name
	Unit          string // what the values count, e.g. "machines" or "MB/s"; drawn over the value axis
	// Empty is the text shown when there is nothing to draw; default "No data yet".
	Empty string
	// Location is the time zone of the time labels; default that of the
	// first point.
	Location *time.Location
	// FitY lets the value axis start near the smallest value instead of at
	// zero (the default, since charts of counts read wrongly otherwise).
	FitY bool
}

// Palette is the fixed series palette, in order of use: the Okabe-Ito
// colours, which stay distinguishable with the common colour-vision
// deficiencies, with the yellow (too pale on white) left out.
var Palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#999999", "#000000"}

const (
	fontSize   = 12
	charWidth  = 6.6 // average advance of a 12px sans-serif glyph, for layout estimates
	titleSize  = 14
	lineHeight = 18
	maxName    = 40 // runes of a legend entry or bar label before it is cut
)

var colorRe = regexp.MustCompile(`^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

func color(custom string, i int) string {
	if colorRe.MatchString(custom) {
		return custom
	}
	return Palette[i%len(Palette)]
}

func (o Options) size(defW, defH int) (int, int) {
	w, h := o.Width, o.Height
	if w <= 0 {
		w = defW
	}
	if h <= 0 {
		h = defH
	}
	return w, h
}

func (o Options) emptyText() string {
	if o.Empty != "" {
		return o.Empty
	}
	return "No data yet"
}

// svg accumulates the markup of one chart.
type svg struct {
	b strings.Builder
}

func newSVG(w, h int, title string) *svg {
	s := &svg{}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="%d" height="%d" viewBox="0 0 %d %d" role="img" font-family="system-ui, sans-serif" font-size="%d">`,
		w, h, w, h, fontSize)
	if title != "" {
		s.b.WriteString("<title>" + esc(title) + "</title>")
	}
	return s
}

func (s *svg) raw(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

// text draws escaped text; anchor is start, middle or end.
func (s *svg) text(x, y float64, anchor, str string, extra string) {
	s.raw(`<text x="%s" y="%s" text-anchor="%s" fill="currentColor"%s>%s</text>`, num(x), num(y), anchor, extra, esc(str))
}

func (s *svg) html() template.HTML {
	s.b.WriteString("</svg>")
	return template.HTML(s.b.String()) // every piece of text went through esc
}

// esc escapes text for XML content and attribute values; characters XML
// cannot carry become U+FFFD, so the result always parses.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// num formats a coordinate compactly.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// cut shortens s to n runes, marking the cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func textWidth(s string) float64 { return float64(len([]rune(s))) * charWidth }

// title draws the chart's title and returns the y below it.
func (s *svg) title(w int, title string) float64 {
	if title == "" {
		return 4
	}
	s.text(float64(w)/2, titleSize+4, "middle", cut(title, int(float64(w)/charWidth)), ` font-size="14" font-weight="bold"`)
	return titleSize + 12
}

// empty renders the chart's frame with a message in place of data.
func empty(o Options, defW, defH int) template.HTML {
	w, h := o.size(defW, defH)
	s := newSVG(w, h, o.Title)
	top := s.title(w, o.Title)
	s.raw(`<rect x="0.5" y="%s" width="%d" height="%s" fill="none" stroke="currentColor" stroke-opacity="0.2" stroke-dasharray="4 4"/>`,
		num(top+0.5), w-1, num(float64(h)-top-1))
	s.text(float64(w)/2, (top+float64(h))/2+fontSize/3, "middle", o.emptyText(), ` fill-opacity="0.6"`)
	return s.html()
}

// unit labels the value axis at its top-left, and returns the y below it.
func (s *svg) unit(y float64, unit string) float64 {
	if unit == "" {
		return y
	}
	s.text(8, y+fontSize, "start", cut(unit, maxName), ` fill-opacity="0.7"`)
	return y + lineHeight
}

type legendEntry struct{ name, color string }

// legend lays entries out in rows across width w starting at y, and returns
// the y below them.
func (s *svg) legend(w int, y float64, entries []legendEntry) float64 {
	if len(entries) == 0 {
		return y
	}
	const swatch, gap, pad = 12.0, 5.0, 16.0
	x, row := 8.0, y
	for _, e := range entries {
		name := cut(e.name, maxName)
		ew := swatch + gap + textWidth(name)
		if x > 8 && x+ew > float64(w)-8 {
			x, row = 8, row+lineHeight
		}
		s.raw(`<rect x="%s" y="%s" width="%s" height="%s" rx="2" fill="%s"/>`, num(x), num(row+2), num(swatch), num(swatch), e.color)
		s.text(x+swatch+gap, row+12, "start", name, "")
		x += ew + pad
	}
	return row + lineHeight + 4
}
