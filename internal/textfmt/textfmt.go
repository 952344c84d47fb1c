// Package textfmt formats figures for recoil's tables the same way in every
// command: the simulator's, the load driver's and the demo's.
package textfmt

import (
	"strconv"
	"time"
)

// Duration formats d with three significant figures ("1.25s", "716ms",
// "48.0µs"), as minutes and seconds from a minute up, and as hours and
// minutes from an hour up.
func Duration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < 0:
		return "-" + Duration(-d)
	case d < time.Microsecond:
		return strconv.FormatInt(int64(d), 10) + "ns"
	case d < time.Millisecond:
		return sig(float64(d)/1e3) + "µs"
	case d < time.Second:
		return sig(float64(d)/1e6) + "ms"
	case d < time.Minute:
		return sig(d.Seconds()) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m" + strconv.Itoa(int(d%time.Minute/time.Second)) + "s"
	}
	return strconv.Itoa(int(d/time.Hour)) + "h" + strconv.Itoa(int(d%time.Hour/time.Minute)) + "m"
}

// sig formats x with three significant figures.
func sig(x float64) string {
	switch {
	case x >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}
