package metricdef

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/recoil-go/recoil"
)

// Counter is a counter both adapters export: its Prometheus name (the
// native collector's, and the one OpenTelemetry's Prometheus exporter
// derives from OTel and Unit), its OpenTelemetry name and unit, and the
// help both give it.
type Counter struct {
	Prom, OTel, Unit, Help string
}

// The hedging counters, labelled by policy alone, and added from each
// call's Summary.
var (
	// Hedges counts Summary.Hedges.
	Hedges = Counter{"recoil_hedges_total", "recoil.hedges", "{hedge}",
		"Hedges started: attempts raced against a slow one (they are among recoil_attempts_total)."}
	// HedgeRefusals counts Summary.RefusedHedges.
	HedgeRefusals = Counter{"recoil_hedge_refusals_total", "recoil.hedge.refusals", "{hedge}",
		"Hedges the retry budget, the limiter or the breaker refused; the attempts in flight went on."}
	// WastedAttempts counts Summary.Wasted.
	WastedAttempts = Counter{"recoil_wasted_attempts_total", "recoil.wasted_attempts", "{attempt}",
		"Attempts abandoned in flight when another attempt of the call answered first or decided it: work the dependency may have done for nobody."}
)

// The fallback counters, labelled by policy and target (and why), and
// added from each call's Summary.Targets.
var (
	// TargetAttempts counts TargetReport.Attempts by target.
	TargetAttempts = Counter{"recoil_target_attempts_total", "recoil.target.attempts", "{attempt}",
		"Attempts made under a Fallback, by target (hedges included)."}
	// Fallbacks counts the TargetReports with a Left, by target and why.
	Fallbacks = Counter{"recoil_fallbacks_total", "recoil.fallbacks", "{move}",
		"Times a call left a target for the next, or passed it over, by target and why (other for a custom rule's reason)."}
)

// Why labels: each reason recoil's DefaultFallbackRule and the Fallback
// itself give for leaving or passing over a target (TargetReport.Left), in
// WhyIndex order, and WhyOther for any other text, so a custom rule's
// reason, free text, cannot make a label value of its own.
var whys = [...]string{
	// DefaultFallbackRule's reasons.
	recoil.WhyRetired,
	recoil.WhyKeyRefused,
	recoil.WhyQuota,
	recoil.WhyContext,
	recoil.WhyOverloaded,
	recoil.WhyThrottled,
	// The Fallback's own, for a target passed over without an attempt
	// (a target tried as the last resort after cooling down and refused
	// then reads "cooling down, then circuit open": it counts as
	// "cooling down").
	recoil.WhyCircuitOpen,
	recoil.WhyAllowance,
	recoil.WhyCooling,
	recoil.WhyOut,
	// Everything else: a custom rule's Why, or WhyMovedOn for one that
	// gave none.
	WhyOther,
}

// WhyOther is the why label of a reason that is none of Whys' others.
const WhyOther = "other"

// NumWhys is the number of why labels, WhyOther included.
const NumWhys = len(whys)

// Whys returns every why label, in WhyIndex order; WhyOther is the last.
func Whys() []string { return slices.Clone(whys[:]) }

// whyCooling prefixes the reason of a target tried as the last resort
// after cooling down, and refused then.
const whyCooling = recoil.WhyCooling + ", then "

// WhyIndex is the index among Whys of the label for left, a
// TargetReport.Left that is not "".
func WhyIndex(left string) int {
	if strings.HasPrefix(left, whyCooling) {
		left = recoil.WhyCooling
	}
	for i, w := range whys[:NumWhys-1] {
		if w == left {
			return i
		}
	}
	return NumWhys - 1
}

// Why is the why label for left (Whys[WhyIndex(left)]).
func Why(left string) string { return whys[WhyIndex(left)] }

// Target labels are bounded twice over: each is at most MaxTargetLen bytes
// of valid UTF-8, and a policy labels at most MaxTargets distinct target
// names, the ones it meets first; any other target's series are
// TargetOther's. A Fallback's targets are the user's configuration, so a
// policy has a handful; the bounds are a guard against a target list built
// from data (one per customer, one per URL), which would otherwise make a
// series per entry.
const (
	MaxTargets   = 16
	MaxTargetLen = 64
	TargetOther  = "other"
)

// TargetLabel is the label of the target named name: name itself, with
// any invalid UTF-8 replaced and cut to MaxTargetLen bytes on a rune
// boundary; TargetOther for "".
func TargetLabel(name string) string {
	if name == "" {
		return TargetOther
	}
	name = strings.ToValidUTF8(name, "\uFFFD")
	if len(name) <= MaxTargetLen {
		return name
	}
	n := MaxTargetLen
	for n > 0 && !utf8.RuneStart(name[n]) {
		n--
	}
	return name[:n]
}

// TargetSeries holds an adapter's series for each target of one policy,
// made by New from the target's label when the target is first met (or
// Add'ed). Get looks a target up without a lock or an allocation. The zero
// TargetSeries with New set is ready; it is safe for concurrent use.
type TargetSeries[S any] struct {
	New func(label string) *S

	mu   sync.Mutex // serialises the writers of cur
	cur  atomic.Pointer[targetList[S]]
	sent map[string]*S // by label, so names cut to one label share series
}

// targetList is a TargetSeries's state, replaced whole by each new target.
type targetList[S any] struct {
	names  []string
	series []*S
	other  *S // TargetOther's series, once MaxTargets names are known
}

// Get returns the series of the target named name.
func (t *TargetSeries[S]) Get(name string) *S {
	l := t.cur.Load()
	if l != nil {
		for i, n := range l.names {
			if n == name {
				return l.series[i]
			}
		}
		if l.other != nil {
			return l.other
		}
	}
	return t.add(name)
}

// add makes name's series, or returns TargetOther's when MaxTargets names
// are known.
func (t *TargetSeries[S]) add(name string) *S {
	t.mu.Lock()
	defer t.mu.Unlock()
	var old targetList[S]
	if l := t.cur.Load(); l != nil {
		for i, n := range l.names {
			if n == name {
				return l.series[i]
			}
		}
		if l.other != nil {
			return l.other
		}
		old = *l
	}
	if t.sent == nil {
		t.sent = map[string]*S{}
	}
	s := t.series(TargetLabel(name))
	l := &targetList[S]{
		names:  append(old.names[:len(old.names):len(old.names)], strings.Clone(name)),
		series: append(old.series[:len(old.series):len(old.series)], s),
	}
	if len(l.names) == MaxTargets {
		l.other = t.series(TargetOther)
	}
	t.cur.Store(l)
	return s
}

// series returns label's series, made once.
func (t *TargetSeries[S]) series(label string) *S {
	s, ok := t.sent[label]
	if !ok {
		s = t.New(label)
		t.sent[label] = s
	}
	return s
}

// PolicyTargets is an adapter's TargetSeries for each policy name, so that
// Observers asked for one name share one MaxTargets bound. The zero
// PolicyTargets is ready; it is safe for concurrent use.
type PolicyTargets[S any] struct {
	mu sync.Mutex
	m  map[string]*TargetSeries[S]
}

// For returns the TargetSeries of policy, made with newSeries the first
// time policy is asked for.
func (p *PolicyTargets[S]) For(policy string, newSeries func(label string) *S) *TargetSeries[S] {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.m[policy]
	if !ok {
		if p.m == nil {
			p.m = map[string]*TargetSeries[S]{}
		}
		t = &TargetSeries[S]{New: newSeries}
		p.m[policy] = t
	}
	return t
}

// Targets passes each of a call's targets to yield with the attempts the
// call sent to it and, when the call left it or passed it over, the index
// among Whys of why (-1 when it did not). It is what both adapters record
// from Summary.Targets; a negative count, which no call reports, reads as
// zero.
func Targets(ts []recoil.TargetReport, yield func(name string, attempts int, why int)) {
	for i := range ts {
		r := &ts[i]
		why := -1
		if r.Left != "" {
			why = WhyIndex(r.Left)
		}
		yield(r.Target, max(r.Attempts, 0), why)
	}
}

// Hedged reports whether s has anything for the hedging counters.
func Hedged(s *recoil.Summary) bool {
	return s.Hedges > 0 || s.RefusedHedges > 0 || s.Wasted > 0
}

// Register makes the series of p's Fallback's named targets, if p has
// one, so that they exist at zero before the first call reaches them. A
// target without a name is met when a call reports it.
func Register[S any](t *TargetSeries[S], p *recoil.Policy) {
	if p.Fallback == nil {
		return
	}
	for _, tg := range p.Fallback.Targets {
		if tg.Name != "" {
			t.Get(tg.Name)
		}
	}
}
