package plot

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// niceStep is the smallest 1, 2 or 5 times a power of ten that is at least
// raw, so tick labels are round numbers a reader can interpolate between.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		// The tolerance keeps 0.3/3 = 0.09999… from becoming 0.2.
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// niceTicks widens [lo, hi] outward to multiples of a nice step giving at
// most about maxTicks intervals, and returns the ticks, the step and the
// widened range.
func niceTicks(lo, hi float64, maxTicks int) (ticks []float64, step, nlo, nhi float64) {
	if maxTicks < 1 {
		maxTicks = 1
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		span := math.Abs(lo) * 0.1
		if span == 0 {
			span = 1
		}
		if lo >= 0 && lo-span < 0 {
			lo, hi = 0, hi+span
		} else {
			lo, hi = lo-span, hi+span
		}
	}
	step = niceStep((hi - lo) / float64(maxTicks))
	first := math.Floor(lo/step + 1e-9)
	last := math.Ceil(hi/step - 1e-9)
	for i := first; i <= last; i++ {
		// Multiplying rather than accumulating keeps 0.1+0.2 drift out of
		// the labels.
		ticks = append(ticks, i*step+0) // +0 turns -0 into 0
	}
	return ticks, step, first * step, last * step
}

// valueFormat prints ticks of one axis alike: with as many decimals as the
// step needs, and large values in k or M.
type valueFormat struct {
	scale    float64
	suffix   string
	decimals int
}

func newValueFormat(step, maxAbs float64) valueFormat {
	f := valueFormat{scale: 1}
	switch {
	case maxAbs >= 1e9:
		f.scale, f.suffix = 1e9, "G"
	case maxAbs >= 1e6:
		f.scale, f.suffix = 1e6, "M"
	case maxAbs >= 1e4:
		f.scale, f.suffix = 1e3, "k"
	}
	if s := step / f.scale; s > 0 {
		f.decimals = max(0, int(-math.Floor(math.Log10(s)+1e-9)))
	}
	return f
}

func (f valueFormat) format(v float64) string {
	s := strconv.FormatFloat(v/f.scale+0, 'f', f.decimals, 64)
	if s == "-0" || strings.Trim(s, "-0.") == "" {
		s = "0"
	}
	if s == "0" {
		return s
	}
	return s + f.suffix
}

// formatValue prints one value (a bar's) with at most two decimals.
func formatValue(v float64) string {
	f := newValueFormat(1, math.Abs(v))
	f.decimals = 2
	s := f.format(v)
	if strings.Contains(s, ".") {
		n := strings.TrimSuffix(s, f.suffix)
		s = strings.TrimRight(strings.TrimRight(n, "0"), ".") + f.suffix
	}
	return s
}

// timeStep is a candidate spacing of time ticks: a duration below a day,
// or whole days or months (calendar arithmetic, so ticks stay on midnight
// and the first of the month across daylight saving changes).
type timeStep struct {
	d      time.Duration
	days   int
	months int
}

func (s timeStep) approx() time.Duration {
	switch {
	case s.months > 0:
		return time.Duration(s.months) * 30 * 24 * time.Hour
	case s.days > 0:
		return time.Duration(s.days) * 24 * time.Hour
	}
	return s.d
}

var timeSteps = []timeStep{
	{d: time.Second}, {d: 2 * time.Second}, {d: 5 * time.Second}, {d: 10 * time.Second},
	{d: 15 * time.Second}, {d: 30 * time.Second},
	{d: time.Minute}, {d: 2 * time.Minute}, {d: 5 * time.Minute}, {d: 10 * time.Minute},
	{d: 15 * time.Minute}, {d: 30 * time.Minute},
	{d: time.Hour}, {d: 2 * time.Hour}, {d: 3 * time.Hour}, {d: 6 * time.Hour}, {d: 12 * time.Hour},
	{days: 1}, {days: 2}, {days: 7}, {days: 14},
	{months: 1}, {months: 3}, {months: 6}, {months: 12},
}

type timeTick struct {
	t     time.Time
	label string
}

// timeTicks picks the finest candidate step giving at most maxTicks ticks
// over [t0, t1], aligned to round clock times in loc, and labels them HH:MM
// (HH:MM:SS for sub-minute steps); when the range spans more than a day,
// ticks on midnight show the date instead.
func timeTicks(t0, t1 time.Time, loc *time.Location, maxTicks int) []timeTick {
	if maxTicks < 1 {
		maxTicks = 1
	}
	span := t1.Sub(t0)
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if span/s.approx() <= time.Duration(maxTicks) {
			step = s
			break
		}
	}
	t0, t1 = t0.In(loc), t1.In(loc)
	y, m, d := t0.Date()
	var cur time.Time
	switch {
	case step.months > 0:
		cur = time.Date(y, time.Month((int(m)-1)/step.months*step.months+1), 1, 0, 0, 0, 0, loc)
	case step.days > 0:
		cur = time.Date(y, m, d, 0, 0, 0, 0, loc)
	default:
		midnight := time.Date(y, m, d, 0, 0, 0, 0, loc)
		cur = midnight.Add(t0.Sub(midnight) / step.d * step.d)
	}
	next := func(t time.Time) time.Time {
		switch {
		case step.months > 0:
			return t.AddDate(0, step.months, 0)
		case step.days > 0:
			return t.AddDate(0, 0, step.days)
		}
		return t.Add(step.d)
	}
	var ticks []timeTick
	for ; !cur.After(t1); cur = next(cur) {
		if cur.Before(t0) {
			continue
		}
		ticks = append(ticks, timeTick{t: cur, label: timeLabel(cur, step, span)})
	}
	return ticks
}

func timeLabel(t time.Time, step timeStep, span time.Duration) string {
	atMidnight := t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0
	switch {
	case step.months >= 12:
		return t.Format("2006")
	case step.months > 0:
		return t.Format("Jan 2006")
	case span > 24*time.Hour && atMidnight:
		return t.Format("Jan 2")
	case step.d > 0 && step.d < time.Minute:
		return t.Format("15:04:05")
	}
	return t.Format("15:04")
}
