// Package metrictest is the script of calls (and of fleet clients' counts,
// RunFleet) both metrics adapters are tested with, and the values each must
// then export, in the names and labels Prometheus shows: the native
// collectors' and those OpenTelemetry's Prometheus exporter derives, which
// are the same.
package metrictest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/limit"
)

// Policy is the policy label every script uses.
const Policy = "payments"

// Observer is what both adapters' per-policy observers offer.
type Observer interface {
	Instrument(p *recoil.Policy)
	BreakerHook() func(from, to breaker.State, at time.Time)
}

// Script is a sequence of calls and the series it must leave non-zero.
type Script struct {
	Name string
	// Run makes the calls; it runs inside a synctest bubble, so waits take
	// no real time and measure exactly.
	Run func(t *testing.T, o Observer)
	// Want is every series that must be non-zero afterwards, keyed as
	// Key writes it; histograms appear as their _count and _sum.
	Want map[string]float64
}

// Key names one series: name{label="value",…}, labels sorted by name.
func Key(name string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(labels)) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", k, labels[k])
	}
	b.WriteByte('}')
	return b.String()
}

// Check compares got (every series, zero or not) with want.
func Check(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for k, v := range got {
		if v == 0 {
			delete(got, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok || !near(g, want[k]) {
			t.Errorf("%s = %v, want %v", k, g, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("%s = %v, want 0", k, got[k])
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

var errReset = errors.New("connection reset by peer") // unclassified: transient

// failing returns an operation that fails its first n calls.
func failing(n int) func(context.Context) error {
	calls := 0
	return func(context.Context) error {
		calls++
		if calls <= n {
			return errReset
		}
		return nil
	}
}

// refuse is a retry budget that admits calls and refuses every retry.
type refuse struct{}

func (refuse) AdmitAt(time.Time) bool               { return true }
func (refuse) RetryAt(time.Time, budget.Cause) bool { return false }
func (refuse) RecordAt(time.Time, budget.Outcome)   {}

func k(name string, labels ...string) string {
	m := map[string]string{"policy": Policy}
	for i := 0; i+1 < len(labels); i += 2 {
		m[labels[i]] = labels[i+1]
	}
	return Key(name, m)
}

// Scripts returns the scripted calls.
func Scripts() []Script {
	return append(retryScripts(), fallbackScripts()...)
}

// retryScripts are the calls of a policy without a Fallback or a Hedge.
func retryScripts() []Script {
	return []Script{{
		Name: "first try",
		Run: func(t *testing.T, o Observer) {
			p := &recoil.Policy{}
			o.Instrument(p)
			must(t, recoil.Do(context.Background(), p, failing(0)), nil)
		},
		Want: map[string]float64{
			k("recoil_attempts_total", "outcome", "success"): 1,
			k("recoil_call_retries_count"):                   1,
			k("recoil_call_retry_delay_seconds_count"):       1,
			k("recoil_stops_total", "reason", "none"):        1,
		},
	}, {
		Name: "two retries",
		Run: func(t *testing.T, o Observer) {
			p := &recoil.Policy{Backoff: backoff.Constant(100 * time.Millisecond), Budget: recoil.NoBudget}
			o.Instrument(p)
			must(t, recoil.Do(context.Background(), p, failing(2)), nil)
		},
		Want: map[string]float64{
			k("recoil_attempts_total", "outcome", "success"):   1,
			k("recoil_attempts_total", "outcome", "transient"): 2,
			k("recoil_call_retries_count"):                     1,
			k("recoil_call_retries_sum"):                       2,
			k("recoil_call_retry_delay_seconds_count"):         1,
			k("recoil_call_retry_delay_seconds_sum"):           0.2,
			k("recoil_retry_wait_seconds_count"):               2,
			k("recoil_retry_wait_seconds_sum"):                 0.2,
			k("recoil_stops_total", "reason", "none"):          1,
		},
	}, {
		Name: "permanent, exhausted and refused",
		Run: func(t *testing.T, o Observer) {
			p := &recoil.Policy{MaxAttempts: 2, Backoff: backoff.Constant(time.Second), Budget: recoil.NoBudget}
			o.Instrument(p)
			must(t, recoil.Do(context.Background(), p, func(context.Context) error { return recoil.Permanent(errReset) }), recoil.ErrPermanent)
			must(t, recoil.Do(context.Background(), p, failing(5)), recoil.ErrAttemptsExhausted)
			p.Budget = refuse{}
			must(t, recoil.Do(context.Background(), p, failing(5)), recoil.ErrBudget)
		},
		Want: map[string]float64{
			k("recoil_attempts_total", "outcome", "permanent"):          1,
			k("recoil_attempts_total", "outcome", "transient"):          3,
			k("recoil_call_retries_count"):                              3,
			k("recoil_call_retries_sum"):                                1,
			k("recoil_call_retry_delay_seconds_count"):                  3,
			k("recoil_call_retry_delay_seconds_sum"):                    1,
			k("recoil_retry_wait_seconds_count"):                        1,
			k("recoil_retry_wait_seconds_sum"):                          1,
			k("recoil_stops_total", "reason", "permanent error"):        1,
			k("recoil_stops_total", "reason", "attempts exhausted"):     1,
			k("recoil_stops_total", "reason", "retry budget exhausted"): 1,
			k("recoil_budget_refusals_total"):                           1,
		},
	}, {
		Name: "breaker opens and closes",
		Run: func(t *testing.T, o Observer) {
			b := breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 2, OpenDuration: time.Second, OnStateChange: o.BreakerHook()}))
			p := &recoil.Policy{MaxAttempts: 1, Breaker: b}
			o.Instrument(p)
			must(t, recoil.Do(context.Background(), p, failing(1)), recoil.ErrAttemptsExhausted)
			must(t, recoil.Do(context.Background(), p, failing(1)), recoil.ErrAttemptsExhausted) // opens
			must(t, recoil.Do(context.Background(), p, failing(0)), recoil.ErrCircuitOpen)
			time.Sleep(time.Second)
			must(t, recoil.Do(context.Background(), p, failing(0)), nil) // half-open, then closed
		},
		Want: map[string]float64{
			k("recoil_attempts_total", "outcome", "success"):            1,
			k("recoil_attempts_total", "outcome", "transient"):          2,
			k("recoil_call_retries_count"):                              4,
			k("recoil_call_retry_delay_seconds_count"):                  4,
			k("recoil_stops_total", "reason", "none"):                   1,
			k("recoil_stops_total", "reason", "attempts exhausted"):     2,
			k("recoil_stops_total", "reason", "circuit open"):           1,
			k("recoil_breaker_transitions_total", "state", "open"):      1,
			k("recoil_breaker_transitions_total", "state", "half-open"): 1,
			k("recoil_breaker_transitions_total", "state", "closed"):    1,
			// recoil_breaker_state is 0: closed again.
		},
	}, {
		Name: "breaker slow calls",
		Run: func(t *testing.T, o Observer) {
			b := breaker.Must(breaker.New(breaker.Settings{SlowCallRate: 0.9, SlowCallThreshold: 5 * time.Second, MinRequests: 10}))
			p := &recoil.Policy{Breaker: b}
			o.Instrument(p)
			sb, ok := p.Breaker.(interface {
				recoil.LatencyBreaker
				RecordSlowAt(time.Time)
			})
			if !ok {
				t.Fatalf("the instrumented breaker %T takes no latencies or no slow reports", p.Breaker)
			}
			now := time.Now()
			for _, latency := range []time.Duration{time.Second, 2 * time.Second, 8 * time.Second, time.Second} {
				sb.RecordLatencyAt(now, breaker.Success, latency)
			}
			sb.RecordSlowAt(now) // a slow stream, as the HTTP Transport reports it
		},
		Want: map[string]float64{
			k("recoil_breaker_slow_reports_total"): 1,
			k("recoil_breaker_window_calls"):       4,
			k("recoil_breaker_window_slow_calls"):  2,
			k("recoil_breaker_slow_call_rate"):     0.5,
		},
	}, {
		Name: "breaker left open",
		Run: func(t *testing.T, o Observer) {
			b := breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 1, OnStateChange: o.BreakerHook()}))
			p := &recoil.Policy{MaxAttempts: 1, Breaker: b}
			o.Instrument(p)
			must(t, recoil.Do(context.Background(), p, failing(1)), recoil.ErrAttemptsExhausted)
		},
		Want: map[string]float64{
			k("recoil_attempts_total", "outcome", "transient"):      1,
			k("recoil_call_retries_count"):                          1,
			k("recoil_call_retry_delay_seconds_count"):              1,
			k("recoil_stops_total", "reason", "attempts exhausted"): 1,
			k("recoil_breaker_transitions_total", "state", "open"):  1,
			k("recoil_breaker_state"):                               2,
		},
	}, {
		Name: "limiter queue",
		Run: func(t *testing.T, o Observer) {
			lim := limit.Must(limit.New(limit.Config{Capacity: 1, MaxQueue: 1}))
			p := &recoil.Policy{Limiter: lim}
			o.Instrument(p)
			if !lim.TryAcquire() {
				t.Fatal("TryAcquire() = false on an idle limiter")
			}
			go func() {
				time.Sleep(50 * time.Millisecond)
				lim.Release()
			}()
			must(t, recoil.Do(context.Background(), p, failing(0)), nil) // queues 50 ms
			must(t, recoil.Do(context.Background(), p, failing(0)), nil) // a free slot: no wait observed
		},
		Want: map[string]float64{
			k("recoil_attempts_total", "outcome", "success"): 2,
			k("recoil_call_retries_count"):                   2,
			k("recoil_call_retry_delay_seconds_count"):       2,
			k("recoil_stops_total", "reason", "none"):        2,
			k("recoil_limiter_queue_wait_seconds_count"):     1,
			k("recoil_limiter_queue_wait_seconds_sum"):       0.05,
		},
	}}
}

func must(t *testing.T, err, want error) {
	t.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Fatalf("Do() = %v, want %v", err, want)
	}
}

// Path is a call path the overhead benchmarks measure.
type Path struct {
	Name string
	// Op makes the operation Do calls, for a path without a Fallback.
	Op func() func(context.Context) error
	// Targets, for a path under a Fallback, makes the Fallback and the
	// operation DoTarget calls.
	Targets func() (*recoil.Fallback, func(context.Context, *recoil.Target) error)
}

// tooLong is a provider's "prompt too long" refusal: under the default
// rule it moves the call to a target with a longer context and cools
// nothing, so every call of a benchmark takes the same path.
var tooLong = recoil.Mark(errors.New("context_length_exceeded"), recoil.Verdict{Class: recoil.ClassPermanent, Code: "context_length_exceeded"})

// twoModels is a Fallback over a short-context model and a long-context
// one.
func twoModels() *recoil.Fallback {
	return &recoil.Fallback{Targets: []recoil.Target{{Name: "short", MaxContext: 8000}, {Name: "long", MaxContext: 200000}}}
}

// Paths are the happy path (a first-try success), the one-retry path (one
// transient failure, a zero wait, then success), and two under a
// Fallback: a success on the first target, and a move from the first
// target (the prompt too long for it) to the second, which succeeds.
var Paths = []Path{
	{Name: "HappyPath", Op: func() func(context.Context) error { return func(context.Context) error { return nil } }},
	{Name: "OneRetry", Op: func() func(context.Context) error {
		fail := false
		return func(context.Context) error {
			if fail = !fail; fail {
				return errReset
			}
			return nil
		}
	}},
	{Name: "FallbackFirst", Targets: func() (*recoil.Fallback, func(context.Context, *recoil.Target) error) {
		return twoModels(), func(context.Context, *recoil.Target) error { return nil }
	}},
	{Name: "FallbackMove", Targets: func() (*recoil.Fallback, func(context.Context, *recoil.Target) error) {
		return twoModels(), func(_ context.Context, t *recoil.Target) error {
			if t.Name == "short" {
				return tooLong
			}
			return nil
		}
	}},
}

// Bench runs Do (DoTarget for a path under a Fallback) under the policy
// that instrument returns, for each of Paths; instrument nil means a
// policy without hooks, and the baseline "hooks" has empty hooks set, so
// the loop takes the path it takes for an adapter.
func Bench(b *testing.B, adapters map[string]func(*recoil.Policy)) {
	for _, path := range Paths {
		for _, name := range slices.Sorted(maps.Keys(adapters)) {
			b.Run(path.Name+"/"+name, func(b *testing.B) {
				p := &recoil.Policy{Backoff: backoff.None{}, Budget: recoil.NoBudget}
				var (
					op       func(context.Context) error
					targetOp func(context.Context, *recoil.Target) error
				)
				if path.Targets != nil {
					p.Fallback, targetOp = path.Targets()
				} else {
					op = path.Op()
				}
				if instrument := adapters[name]; instrument != nil {
					instrument(p)
				}
				ctx := context.Background()
				b.ReportAllocs()
				stop := ReportCPU(b)
				for b.Loop() {
					var err error
					if targetOp != nil {
						err = recoil.DoTarget(ctx, p, targetOp)
					} else {
						err = recoil.Do(ctx, p, op)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				stop()
			})
		}
	}
}

// EmptyHooks sets hooks that do nothing: the baseline for an adapter's
// own cost, since any hook takes the loop off Do's inlined fast path.
func EmptyHooks(p *recoil.Policy) {
	p.Observe = func(context.Context, recoil.Summary) {}
	p.OnAttempt = func(context.Context, recoil.AttemptEvent) {}
}

// Run runs every script in a synctest bubble against a fresh observer from
// setup, and checks what collect then reads.
func Run(t *testing.T, setup func(t *testing.T) (o Observer, collect func(t *testing.T) map[string]float64)) {
	for _, s := range Scripts() {
		t.Run(s.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o, collect := setup(t)
				s.Run(t, o)
				Check(t, collect(t), s.Want)
			})
		})
	}
}

// ReportCPU starts counting the process's CPU time; the function it returns
// reports it per iteration as cpu-ns/op. On a shared machine whose load
// stretches wall time, CPU time is what an adapter costs: the time the
// process ran, not the time it waited for a core.
func ReportCPU(b *testing.B) (stop func()) {
	start := cpuTime()
	return func() {
		if used := cpuTime() - start; used > 0 && b.N > 0 {
			b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}
