package chart

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// Ticks is a plot.Ticker that labels round numbers — 1, 2 or 5 times a
// power of ten — four to seven to an axis. When both ends of the range are
// whole numbers the step is at least 1, so the labels are whole numbers,
// printed without decimals; otherwise a label carries the decimals it
// needs and no more ("0", "0.5", "1"). Thousands are grouped: "2,000".
type Ticks struct{}

var _ plot.Ticker = Ticks{}

// Ticks returns the labelled ticks between min and max.
func (Ticks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || math.IsInf(max-min, 0) {
		return nil
	}
	step := Step(min, max)
	dec := decimals(step)
	var ts []plot.Tick
	for i := math.Ceil(min/step - 1e-9); ; i++ {
		v := i * step
		if v > max+step*1e-9 {
			break
		}
		ts = append(ts, plot.Tick{Value: v, Label: Format(v, dec)})
	}
	return ts
}

// Step returns the distance between labelled ticks on [min, max]: the
// smallest of 1, 2 or 5 times a power of ten that makes at most seven
// steps, and at least 1 when min and max are whole numbers.
func Step(min, max float64) float64 {
	span := max - min
	if !(span > 0) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / 7
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw*(1-1e-9) {
			step = m * mag
			break
		}
	}
	if whole(min) && whole(max) && step < 1 {
		step = 1
	}
	return step
}

// Extend returns [min, max] widened to the labelled ticks around it.
func Extend(min, max float64) (lo, hi float64) {
	step := Step(min, max)
	return math.Floor(min/step+1e-9) * step, math.Ceil(max/step-1e-9) * step
}

func whole(x float64) bool { return x == math.Trunc(x) }

// decimals is how many decimals a multiple of step needs.
func decimals(step float64) int {
	if step >= 1 {
		return 0
	}
	return int(math.Ceil(-math.Log10(step) - 1e-9))
}

// Format prints v with at most dec decimals, no trailing zeros, and
// thousands grouped with commas: "0.25", "1", "2,500".
func Format(v float64, dec int) string {
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}
