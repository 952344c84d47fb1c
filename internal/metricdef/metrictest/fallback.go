package metrictest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/internal/metricdef"
)

// status is an error an SDK would be classified as for an HTTP status, with
// an optional provider code.
func status(code int, provider string) error {
	v := recoil.StatusVerdict(code)
	if provider != "" {
		v.Code = provider
	}
	return recoil.Mark(fmt.Errorf("status %d %s", code, provider), v)
}

// answers returns an operation for DoTarget under which each target
// answers from its own script: nil, or past the end of a script the last
// answer again; a target without a script succeeds. It is safe for
// concurrent use (a Hedge runs it so).
func answers(script map[string][]error) func(context.Context, *recoil.Target) error {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(_ context.Context, t *recoil.Target) error {
		mu.Lock()
		defer mu.Unlock()
		s := script[t.Name]
		n := seen[t.Name]
		seen[t.Name]++
		if len(s) == 0 {
			return nil
		}
		return s[min(n, len(s)-1)]
	}
}

// slowFirst returns an operation whose first attempt answers after a
// second (or when its context ends) and whose others answer at once.
func slowFirst() func(context.Context) error {
	var mu sync.Mutex
	n := 0
	return func(ctx context.Context) error {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if !first {
			return nil
		}
		tm := time.NewTimer(time.Second)
		defer tm.Stop()
		select {
		case <-tm.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// open is a breaker whose circuit is open.
type open struct{}

func (open) AllowAt(time.Time) bool              { return false }
func (open) RecordAt(time.Time, breaker.Outcome) {}

// spent is an allowance that admits nothing: a key out of its share.
type spent struct{}

func (spent) AdmitAt(time.Time) bool               { return false }
func (spent) RetryAt(time.Time, budget.Cause) bool { return false }
func (spent) RecordAt(time.Time, budget.Outcome)   {}

// tk names the series of one of Policy's targets.
func tk(name, target string, labels ...string) string {
	return k(name, append([]string{"target", target}, labels...)...)
}

// moved names the fallbacks series of target for why.
func moved(target, why string) string {
	return tk(metricdef.Fallbacks.Prom, target, "why", why)
}

// tried names the target-attempts series of target.
func tried(target string) string {
	return tk(metricdef.TargetAttempts.Prom, target)
}

// fallbackScripts are the calls of policies with a Fallback or a Hedge.
func fallbackScripts() []Script {
	return []Script{{
		Name: "fallback by the default rule",
		Run: func(t *testing.T, o Observer) {
			f := &recoil.Fallback{Targets: []recoil.Target{
				{Name: "retired"}, {Name: "revoked"}, {Name: "broke"}, {Name: "busy"}, {Name: "limited"},
				{Name: "short", MaxContext: 1000}, {Name: "long", MaxContext: 2000},
			}}
			p := &recoil.Policy{MaxAttempts: 10, Budget: recoil.NoBudget, Fallback: f}
			o.Instrument(p)
			op := answers(map[string][]error{
				"retired": {status(404, "")},
				"revoked": {status(401, "")},
				"broke":   {status(402, "insufficient_quota")},
				"busy":    {status(503, "")},
				"limited": {status(429, "")},
				"short":   {status(400, "context_length_exceeded")},
			})
			// Each target is left for its own reason, ...
			must(t, recoil.DoTarget(context.Background(), p, op), nil)
			// ... and the next call passes over those cooling down or out,
			// and leaves the short one again.
			must(t, recoil.DoTarget(context.Background(), p, op), nil)
		},
		Want: map[string]float64{
			k("recoil_attempts_total", "outcome", "success"):    2,
			k("recoil_attempts_total", "outcome", "permanent"):  5,
			k("recoil_attempts_total", "outcome", "overloaded"): 1,
			k("recoil_attempts_total", "outcome", "throttled"):  1,
			k("recoil_call_retries_count"):                      2,
			k("recoil_call_retries_sum"):                        7,
			k("recoil_call_retry_delay_seconds_count"):          2,
			k("recoil_retry_wait_seconds_count"):                7, // moves: at once
			k("recoil_stops_total", "reason", "none"):           2,
			tried("retired"):                       1,
			tried("revoked"):                       1,
			tried("broke"):                         1,
			tried("busy"):                          1,
			tried("limited"):                       1,
			tried("short"):                         2,
			tried("long"):                          2,
			moved("retired", "model not found"):    1,
			moved("retired", "cooling down"):       1,
			moved("revoked", "key refused"):        1,
			moved("revoked", "out until restored"): 1,
			moved("broke", "quota exhausted"):      1,
			moved("broke", "out until restored"):   1,
			moved("busy", "overloaded"):            1,
			moved("busy", "cooling down"):          1,
			moved("limited", "rate limited"):       1,
			moved("limited", "cooling down"):       1,
			moved("short", "context too long"):     2,
		},
	}, {
		Name: "fallback passes over a breaker and an allowance",
		Run: func(t *testing.T, o Observer) {
			p := &recoil.Policy{Budget: recoil.NoBudget, Fallback: &recoil.Fallback{Targets: []recoil.Target{
				{Name: "tripped", Breaker: open{}}, {Name: "spare"},
			}}}
			o.Instrument(p)
			must(t, recoil.DoTarget(context.Background(), p, answers(nil)), nil)
			// A target out of allowance is passed over and cooled; the
			// next call, with no other target, tries it as the last resort
			// and is refused again ("cooling down, then allowance
			// exhausted").
			p = &recoil.Policy{Budget: recoil.NoBudget, Fallback: &recoil.Fallback{Targets: []recoil.Target{
				{Name: "metered", Allowance: spent{}},
			}}}
			o.Instrument(p)
			must(t, recoil.DoTarget(context.Background(), p, answers(nil)), recoil.ErrNoTarget)
			must(t, recoil.DoTarget(context.Background(), p, answers(nil)), recoil.ErrNoTarget)
		},
		Want: map[string]float64{
			k("recoil_attempts_total", "outcome", "success"): 1,
			k("recoil_call_retries_count"):                   3,
			k("recoil_call_retry_delay_seconds_count"):       3,
			k("recoil_stops_total", "reason", "none"):        1,
			k("recoil_stops_total", "reason", "no target"):   2,
			tried("spare"):                          1,
			moved("tripped", "circuit open"):        1,
			moved("metered", "allowance exhausted"): 1,
			moved("metered", "cooling down"):        1,
		},
	}, {
		Name: "fallback by a custom rule",
		Run: func(t *testing.T, o Observer) {
			why := "tenant 4711 is over its plan" // free text: labelled other
			p := &recoil.Policy{Budget: recoil.NoBudget, Backoff: backoff.None{}, Fallback: &recoil.Fallback{
				Targets: []recoil.Target{{}, {Name: "backup"}}, // the first is "target 1"
				Rule:    func(recoil.Verdict, time.Duration) recoil.Leave { return recoil.Leave{Move: true, Why: why} },
			}}
			o.Instrument(p)
			op := answers(map[string][]error{"": {errReset}})
			must(t, recoil.DoTarget(context.Background(), p, op), nil)
			why = "" // recoil says "moved on": labelled other too
			must(t, recoil.DoTarget(context.Background(), p, op), nil)
		},
		Want: map[string]float64{
			k("recoil_attempts_total", "outcome", "success"):   2,
			k("recoil_attempts_total", "outcome", "transient"): 2,
			k("recoil_call_retries_count"):                     2,
			k("recoil_call_retries_sum"):                       2,
			k("recoil_call_retry_delay_seconds_count"):         2,
			k("recoil_retry_wait_seconds_count"):               2,
			k("recoil_stops_total", "reason", "none"):          2,
			tried("target 1"):                                  2,
			tried("backup"):                                    2,
			moved("target 1", metricdef.WhyOther):              2,
		},
	}, {
		Name: "fallback over more targets than are labelled",
		Run: func(t *testing.T, o Observer) {
			f := &recoil.Fallback{}
			script := map[string][]error{}
			for _, name := range manyTargets() {
				f.Targets = append(f.Targets, recoil.Target{Name: name})
				script[name] = []error{status(404, "")}
			}
			delete(script, f.Targets[len(f.Targets)-1].Name) // the last one answers
			p := &recoil.Policy{MaxAttempts: len(f.Targets), Budget: recoil.NoBudget, Fallback: f}
			o.Instrument(p)
			must(t, recoil.DoTarget(context.Background(), p, answers(script)), nil)
		},
		Want: func() map[string]float64 {
			names := manyTargets()
			want := map[string]float64{
				k("recoil_attempts_total", "outcome", "success"):   1,
				k("recoil_attempts_total", "outcome", "permanent"): float64(len(names) - 1),
				k("recoil_call_retries_count"):                     1,
				k("recoil_call_retries_sum"):                       float64(len(names) - 1),
				k("recoil_call_retry_delay_seconds_count"):         1,
				k("recoil_retry_wait_seconds_count"):               float64(len(names) - 1),
				k("recoil_stops_total", "reason", "none"):          1,
			}
			// The first MaxTargets keep their names (cut, and made valid
			// UTF-8); the rest are other.
			for i := range names {
				label := metricdef.TargetOther
				if i < metricdef.MaxTargets {
					label = manyLabels[i]
				}
				want[tried(label)]++
				if i < len(names)-1 {
					want[moved(label, "model not found")]++
				}
			}
			return want
		}(),
	}, {
		Name: "hedges: won, refused",
		Run: func(t *testing.T, o Observer) {
			p := &recoil.Policy{Budget: recoil.NoBudget, Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond}}
			o.Instrument(p)
			// The hedge starts at 100 ms and answers at once; the first
			// attempt is abandoned.
			must(t, recoil.Do(context.Background(), p, slowFirst()), nil)
			// The budget refuses the hedge; the first attempt answers at 1 s.
			p.Budget = refuse{}
			must(t, recoil.Do(context.Background(), p, slowFirst()), nil)
		},
		Want: map[string]float64{
			k("recoil_attempts_total", "outcome", "success"):  2,
			k("recoil_attempts_total", "outcome", "canceled"): 1, // the loser
			k("recoil_call_retries_count"):                    2,
			k("recoil_call_retries_sum"):                      1,
			k("recoil_call_retry_delay_seconds_count"):        2,
			k("recoil_stops_total", "reason", "none"):         2,
			k(metricdef.Hedges.Prom):                          1,
			k(metricdef.HedgeRefusals.Prom):                   1,
			k(metricdef.WastedAttempts.Prom):                  1,
		},
	}, {
		Name: "hedged fallback",
		Run: func(t *testing.T, o Observer) {
			p := &recoil.Policy{Budget: recoil.NoBudget, Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond},
				Fallback: &recoil.Fallback{Targets: []recoil.Target{{Name: "primary"}, {Name: "secondary"}}}}
			o.Instrument(p)
			slow := slowFirst()
			must(t, recoil.DoTarget(context.Background(), p, func(ctx context.Context, _ *recoil.Target) error { return slow(ctx) }), nil)
		},
		Want: map[string]float64{
			k("recoil_attempts_total", "outcome", "success"):  1,
			k("recoil_attempts_total", "outcome", "canceled"): 1,
			k("recoil_call_retries_count"):                    1,
			k("recoil_call_retries_sum"):                      1,
			k("recoil_call_retry_delay_seconds_count"):        1,
			k("recoil_stops_total", "reason", "none"):         1,
			k(metricdef.Hedges.Prom):                          1,
			k(metricdef.WastedAttempts.Prom):                  1,
			tried("primary"):                                  2, // the hedge went to the same target
		},
	}}
}

// manyTargets is more target names than a policy labels: one too long for
// a label, one not UTF-8, then short ones.
func manyTargets() []string {
	names := []string{strings.Repeat("m", metricdef.MaxTargetLen+16), "bad\xffname"}
	for i := len(names); i < metricdef.MaxTargets+2; i++ {
		names = append(names, fmt.Sprintf("t%02d", i+1))
	}
	return names
}

// manyLabels are the labels of manyTargets' first MaxTargets names.
var manyLabels = func() []string {
	labels := []string{strings.Repeat("m", metricdef.MaxTargetLen), "bad\uFFFDname"}
	for i := len(labels); i < metricdef.MaxTargets; i++ {
		labels = append(labels, fmt.Sprintf("t%02d", i+1))
	}
	return labels
}()
