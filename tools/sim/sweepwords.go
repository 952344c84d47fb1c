package sim

import (
	"math"
	"strconv"
	"strings"
)

// SweepAxis says in words what a sweep varies, for a table's column or a
// chart's axis: never the path itself ("clients[writers].callers") but
// "contending clients".
type SweepAxis struct {
	// Noun names the swept value without its unit: "failure rate at backend".
	Noun string
	// Title is Noun with its unit: "failure rate at backend (%)".
	Title string
	// Scale is what a value is multiplied by to be shown (100 for a
	// fraction shown as a percentage), and Unit what follows it ("%").
	Scale float64
	Unit  string
}

// Value writes a sweep value as the axis counts it: "5%" for 0.05 of a
// fraction, the value itself otherwise.
func (a SweepAxis) Value(v string) string {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || a.Scale == 0 || a.Scale == 1 {
		return v
	}
	x *= a.Scale
	dec := 0
	for dec < 6 && math.Abs(x*math.Pow10(dec)-math.Round(x*math.Pow10(dec))) > 1e-9 {
		dec++
	}
	return strconv.FormatFloat(x, 'f', dec, 64) + a.Unit
}

// SweepAxis says in words what r's sweep varies; its zero value when r
// has no sweep.
func (r *Result) SweepAxis() SweepAxis {
	if r.SweepPath == "" {
		return SweepAxis{}
	}
	contention := false // the target is a record that clients contend for
	for i := range r.Runs {
		for _, s := range r.Runs[i].Services {
			if s.Name == r.Target && s.Writes > 0 {
				contention = true
			}
		}
	}
	return DescribeSweep(r.SweepPath, contention)
}

// fieldWords are the numeric fields a sweep may vary, in words, and
// whether the value is a fraction shown as a percentage.
var fieldWords = map[string]struct {
	words    string
	fraction bool
}{
	"callers":       {"callers", false},
	"calls":         {"calls per caller", false},
	"rate":          {"arrivals per second", false},
	"workers":       {"workers", false},
	"queue":         {"queue limit", false},
	"failure":       {"failure rate", true},
	"allowance":     {"allowance per second", false},
	"recover_below": {"recovery threshold per second", false},
	"attempts":      {"attempts allowed per call", false},
	"hop":           {"retries per call tree", false},
	"limit":         {"concurrency limit", false},
	"tokens":        {"budget tokens", false},
	"ratio":         {"budget ratio", false},
	"percent":       {"retry budget (% of requests)", false},
	"multiplier":    {"backoff multiplier", false},
	"jitter":        {"jitter", false},
	"failures":      {"failures that open the breaker", false},
	"failure_rate":  {"failure rate that opens the breaker", true},
	"min_requests":  {"requests before the breaker judges", false},
	"capacity":      {"quota capacity", false},
	"retry_cost":    {"quota cost of a retry", false},
	"timeout_cost":  {"quota cost of a timeout", false},
	"throttle_cost": {"quota cost of a 429", false},
	"min_per_sec":   {"retries per second always allowed", false},
	"k":             {"throttling factor K", false},
}

// DescribeSweep turns a sweep path into words. contention says the swept
// clients contend for one record.
func DescribeSweep(path string, contention bool) SweepAxis {
	var keys []string
	var kind, owner string
	for i, part := range strings.Split(path, ".") {
		key, name, _ := strings.Cut(strings.TrimSuffix(part, "]"), "[")
		if i == 0 && name != "" {
			kind, owner = key, name
			continue
		}
		keys = append(keys, key)
	}
	a := SweepAxis{Scale: 1}
	last := ""
	if len(keys) > 0 {
		last = keys[len(keys)-1]
	}
	words := spaced(strings.Join(keys, " "))
	if f, ok := fieldWords[last]; ok {
		words = f.words
		if len(keys) > 1 { // a field of a nested mapping: "backoff base"
			if parent := strings.TrimSuffix(spaced(keys[len(keys)-2]), "s"); !strings.Contains(words, parent) {
				words = parent + " " + words
			}
		}
		if f.fraction {
			a.Scale, a.Unit = 100, "%"
		}
	}
	if _, err := strconv.Atoi(owner); err == nil { // an index, not a name
		owner = strings.TrimSuffix(kind, "s") + " " + owner
	}
	switch {
	case kind == "clients" && last == "callers" && contention:
		words = "contending clients"
	case kind == "services" && owner != "":
		words += " at " + owner
	case (kind == "clients" || kind == "policies") && owner != "" && owner != last:
		words += " (" + owner + ")"
	}
	if words == "" {
		words = "swept value"
	}
	a.Noun, a.Title = words, words
	if a.Unit != "" {
		a.Title += " (" + a.Unit + ")"
	}
	return a
}

func spaced(key string) string { return strings.ReplaceAll(key, "_", " ") }
