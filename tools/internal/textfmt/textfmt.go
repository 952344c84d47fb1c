// Package textfmt formats figures the same way in every recoil command: the
// simulator's, the load driver's, the gateway's and the demo's tables, and
// their -json output.
//
// The JSON convention, shared by every -json output and the gateway's /stats:
// durations and instants relative to a run's start are float milliseconds in
// fields ending in _ms (Millis); rates end in _per_s or _per_min; stop reasons
// are spelled as recoil.Reason.String() ("attempts exhausted"), in JSON and in
// text alike (Counts keeps them whole); map keys that are numbers (status
// codes, attempt numbers) are strings; wall-clock times are RFC 3339.
package textfmt

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Millis is d in milliseconds, as every _ms field of recoil's JSON holds it.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Counts writes a count per key in key order, "attempts exhausted 2,
// deadline 1", keeping each key as it is spelled elsewhere (a stop reason
// reads the same in a table as in JSON). An empty map is "-".
func Counts[N int | int64 | uint64](m map[string]N) string {
	if len(m) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteString(" ")
		b.WriteString(strconv.FormatUint(uint64(m[k]), 10))
	}
	return b.String()
}

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

// GuardCost formats what guards cost, by the stop reason recoil prints
// ("circuit open", "retry budget exhausted"): the answers the calls they
// turned away would likely have had, as "breaker ≈68, budget ≈168", or
// "-" when no guard turned a call away.
func GuardCost(likely map[string]float64) string {
	if len(likely) == 0 {
		return "-"
	}
	short := map[string]string{"circuit open": "breaker", "retry budget exhausted": "budget"}
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(likely)) {
		if i > 0 {
			b.WriteString(", ")
		}
		name := short[k]
		if name == "" {
			name = k
		}
		b.WriteString(name)
		b.WriteString(" ≈")
		b.WriteString(strconv.FormatFloat(likely[k], 'f', 0, 64))
	}
	return b.String()
}
