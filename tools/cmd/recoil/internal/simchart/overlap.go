package simchart

import "math"

// A line that lies on an earlier one hides it: the later is drawn on top.
// coincideTol is how close, as a share of the panel's top, two lines'
// values must be to count as one line to the eye; coincideShare is the
// share of a time line's bins that must be that close for it to be drawn
// dashed, so the one beneath shows through.
const (
	coincideTol   = 0.015
	coincideShare = 0.3
)

// onLine reports whether ys lies on earlier (the same x values): how many
// of its values are within tol of earlier's, out of how many, and whether
// every one is exactly equal. Values where skip is true are not counted:
// where every line of the panel lies together, no line hides another.
func onLine(ys, earlier []float64, tol float64, skip []bool) (close, n int, exact bool) {
	exact = true
	for i := range min(len(ys), len(earlier)) {
		if i < len(skip) && skip[i] {
			continue
		}
		d := math.Abs(ys[i] - earlier[i])
		if d <= tol {
			close++
		}
		exact = exact && d == 0
		n++
	}
	return close, n, exact && n > 0
}

// coinciding returns the earlier line (an index into earlier) that ys lies
// on for at least share of its values, -1 if none, and whether it lies on
// it exactly.
func coinciding(ys []float64, earlier [][]float64, top, share float64, skip []bool) (int, bool) {
	tol := coincideTol * top
	best, bestShare, bestExact := -1, 0.0, false
	for j, e := range earlier {
		close, n, exact := onLine(ys, e, tol, skip)
		if n == 0 {
			continue
		}
		if f := float64(close) / float64(n); f >= share && f > bestShare {
			best, bestShare, bestExact = j, f, exact
		}
	}
	return best, bestExact
}

// together marks the values (by index) where every line lies within tol
// of every other: a stretch where the lines are one, and none is hidden.
func together(lines [][]float64, tol float64) []bool {
	if len(lines) < 2 {
		return nil
	}
	n := len(lines[0])
	for _, l := range lines {
		n = min(n, len(l))
	}
	skip := make([]bool, n)
	for i := range n {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, l := range lines {
			lo, hi = min(lo, l[i]), max(hi, l[i])
		}
		skip[i] = hi-lo <= tol
	}
	return skip
}

// coincideNote is the legend's word for a line drawn dashed because it
// lies on another.
func coincideNote(other string, exact, everywhere bool) string {
	switch {
	case exact:
		return " (dashed: the same as " + other + ")"
	case everywhere:
		return " (dashed: on " + other + ")"
	}
	return " (dashed where it lies on " + other + ")"
}
