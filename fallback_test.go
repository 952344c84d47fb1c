package recoil_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/internal/conformance"
)

// statusErr is an error that reports an HTTP status, with an optional
// provider code, as an SDK's error would be classified.
func statusErr(code int, provider string) error {
	v := recoil.StatusVerdict(code)
	if provider != "" {
		v.Code = provider
	}
	return recoil.Mark(fmt.Errorf("status %d %s", code, provider), v)
}

// targets returns a Fallback over the named targets.
func targets(names ...string) *recoil.Fallback {
	f := &recoil.Fallback{}
	for _, n := range names {
		f.Targets = append(f.Targets, recoil.Target{Name: n})
	}
	return f
}

// runChain runs one DoTarget call under p in a synctest bubble: each
// target answers from its own script (nil: success; past the end, the
// last answer repeats). It returns the targets the attempts went to, the
// events' reasons for leaving, and the call's error.
func runChain(t *testing.T, p *recoil.Policy, script map[string][]error) (route []string, left []string, err error) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		seen := map[string]int{}
		p.OnAttempt = func(_ context.Context, e recoil.AttemptEvent) {
			if e.Left != "" {
				left = append(left, e.Target+": "+e.Left)
			}
		}
		err = recoil.DoTarget(t.Context(), p, func(_ context.Context, tg *recoil.Target) error {
			route = append(route, tg.Name)
			s := script[tg.Name]
			n := seen[tg.Name]
			seen[tg.Name]++
			if len(s) == 0 {
				return nil
			}
			return s[min(n, len(s)-1)]
		})
	})
	return route, left, err
}

func TestDefaultFallbackRule(t *testing.T) {
	cool := 15 * time.Second
	tests := []struct {
		name string
		v    recoil.Verdict
		want recoil.Leave
	}{
		{"retired model", recoil.StatusVerdict(404), recoil.Leave{Move: true, Cool: recoil.RetiredCooldown, Why: "model not found"}},
		{"OpenAI model_not_found", recoil.Verdict{Class: recoil.ClassPermanent, Code: "model_not_found"}, recoil.Leave{Move: true, Cool: recoil.RetiredCooldown, Why: "model not found"}},
		{"revoked key", recoil.StatusVerdict(401), recoil.Leave{Move: true, Cool: recoil.CoolForever, Why: "key refused"}},
		{"Anthropic authentication_error", recoil.Verdict{Class: recoil.ClassPermanent, Code: "authentication_error"}, recoil.Leave{Move: true, Cool: recoil.CoolForever, Why: "key refused"}},
		{"forbidden", recoil.StatusVerdict(403), recoil.Leave{Move: true, Cool: recoil.CoolForever, Why: "key refused"}},
		{"quota", recoil.Verdict{Class: recoil.ClassPermanent, Code: "insufficient_quota"}, recoil.Leave{Move: true, Cool: recoil.CoolForever, Why: "quota exhausted"}},
		{"credit balance", recoil.Verdict{Class: recoil.ClassPermanent, Code: "credit_balance_exhausted"}, recoil.Leave{Move: true, Cool: recoil.CoolForever, Why: "quota exhausted"}},
		{"context too long", recoil.Verdict{Class: recoil.ClassPermanent, Code: "context_length_exceeded"}, recoil.Leave{Move: true, Longer: true, Why: "context too long"}},
		{"413", recoil.StatusVerdict(413), recoil.Leave{Move: true, Longer: true, Why: "context too long"}},
		{"overloaded 529", recoil.StatusVerdict(529), recoil.Leave{Move: true, Cool: cool, Why: "overloaded"}},
		{"rate limited, a long Retry-After", recoil.Verdict{Class: recoil.ClassThrottled, Wait: time.Minute}, recoil.Leave{Move: true, Cool: time.Minute, Why: "rate limited"}},
		{"a 500 stays", recoil.StatusVerdict(500), recoil.Leave{}},
		{"a timeout stays", recoil.Verdict{Class: recoil.ClassTransient, Timeout: true}, recoil.Leave{}},
		{"a validator's 400 stays", recoil.StatusVerdict(400), recoil.Leave{}},
		{"a 422 stays", recoil.StatusVerdict(422), recoil.Leave{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := recoil.DefaultFallbackRule(tt.v, cool); got != tt.want {
				t.Errorf("DefaultFallbackRule(%v) = %+v, want %+v", tt.v, got, tt.want)
			}
		})
	}
}

// TestFallbackRetired: Fallback.Retired sets how long a retired model's
// target is passed over, in place of RetiredCooldown.
func TestFallbackRetired(t *testing.T) {
	for _, tc := range []struct {
		name    string
		retired time.Duration
		want    time.Duration
	}{{"default", 0, recoil.RetiredCooldown}, {"set", 2 * time.Second, 2 * time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := targets("a", "b")
				f.Retired = tc.retired
				p := &recoil.Policy{Budget: recoil.NoBudget, Fallback: f}
				err := recoil.DoTarget(t.Context(), p, func(_ context.Context, tg *recoil.Target) error {
					if tg.Name == "a" {
						return statusErr(404, "")
					}
					return nil
				})
				if st := f.Status(time.Time{}); err != nil || st[0].Cooling != tc.want {
					t.Errorf("DoTarget = %v; target a cooling %v, want %v", err, st[0].Cooling, tc.want)
				}
			})
		})
	}
}

// TestFallbackChain runs one call through a chain of targets per row: the
// targets its attempts reach, in order, and how it ends.
func TestFallbackChain(t *testing.T) {
	long := func(f *recoil.Fallback) *recoil.Fallback {
		f.Targets[0].MaxContext, f.Targets[1].MaxContext, f.Targets[2].MaxContext = 8000, 8000, 200000
		return f
	}
	tests := []struct {
		name      string
		fallback  *recoil.Fallback
		policy    func(p *recoil.Policy)
		script    map[string][]error
		route     string
		left      string
		is        error
		reports   string
		waitedMin time.Duration
	}{
		{name: "the first target answers", fallback: targets("a", "b"), route: "a", reports: "a:1"},
		{name: "a retired model's 404 moves on at once", fallback: targets("a", "b"),
			script: map[string][]error{"a": {statusErr(404, "")}}, route: "a b", left: "a: model not found", reports: "a:1 (model not found) b:1"},
		{name: "a revoked key moves on", fallback: targets("a", "b"),
			script: map[string][]error{"a": {statusErr(401, "invalid_api_key")}}, route: "a b", left: "a: key refused", reports: "a:1 (key refused) b:1"},
		{name: "an exhausted quota moves on", fallback: targets("a", "b"),
			script: map[string][]error{"a": {statusErr(429, "insufficient_quota")}}, route: "a b", left: "a: quota exhausted"},
		{name: "overloaded moves on", fallback: targets("a", "b"),
			script: map[string][]error{"a": {statusErr(529, "")}}, route: "a b", left: "a: overloaded"},
		{name: "context too long skips the short targets", fallback: long(targets("a", "b", "c")),
			script: map[string][]error{"a": {statusErr(400, "context_length_exceeded")}}, route: "a c", left: "a: context too long", reports: "a:1 (context too long) c:1"},
		{name: "context too long with no longer target stops", fallback: targets("a", "b"),
			script: map[string][]error{"a": {statusErr(400, "context_length_exceeded")}}, route: "a", is: recoil.ErrPermanent},
		{name: "a 500 is retried on the same target", fallback: targets("a", "b"),
			script: map[string][]error{"a": {statusErr(500, ""), nil}}, route: "a a", reports: "a:2", waitedMin: time.Millisecond},
		{name: "a validator's 400 stops on every target alike", fallback: targets("a", "b"),
			script: map[string][]error{"a": {statusErr(400, "invalid_request_error")}}, route: "a", is: recoil.ErrPermanent},
		{name: "the whole chain counts against MaxAttempts", fallback: targets("a", "b", "c", "d"),
			script: map[string][]error{"a": {statusErr(404, "")}, "b": {statusErr(404, "")}, "c": {statusErr(404, "")}, "d": {statusErr(404, "")}},
			route:  "a b c", left: "a: model not found,b: model not found", is: recoil.ErrAttemptsExhausted},
		{name: "the budget refuses the move", fallback: targets("a", "b"), policy: func(p *recoil.Policy) { p.Budget = refuseRetries{Admit: true} },
			script: map[string][]error{"a": {statusErr(404, "")}}, route: "a", is: recoil.ErrBudget},
		{name: "overloaded on the last target is retried there", fallback: targets("a", "b"),
			script: map[string][]error{"a": {statusErr(503, "")}, "b": {statusErr(503, ""), nil}}, route: "a b b", left: "a: overloaded", reports: "a:1 (overloaded) b:2", waitedMin: time.Nanosecond}, // a jittered wait: any, not none
		{name: "an open breaker passes the target over", fallback: func() *recoil.Fallback {
			f := targets("a", "b")
			f.Targets[0].Breaker = openBreaker()
			return f
		}(), route: "b", reports: "a:0 (circuit open) b:1"},
		{name: "every breaker open", fallback: func() *recoil.Fallback {
			f := targets("a", "b")
			f.Targets[0].Breaker, f.Targets[1].Breaker = openBreaker(), openBreaker()
			return f
		}(), route: "", is: recoil.ErrCircuitOpen, reports: "a:0 (circuit open) b:0 (circuit open)"},
		{name: "an allowance exhausted passes the target over", fallback: func() *recoil.Fallback {
			f := targets("a", "b")
			f.Targets[0].Allowance = refuseRetries{}
			return f
		}(), route: "b", reports: "a:0 (allowance exhausted) b:1"},
		{name: "no target at all", fallback: &recoil.Fallback{}, route: "", is: recoil.ErrNoTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &recoil.Policy{Budget: recoil.NoBudget, Backoff: backoff.Constant(time.Millisecond), Fallback: tt.fallback}
			if tt.policy != nil {
				tt.policy(p)
			}
			var sum recoil.Summary
			p.Observe = func(_ context.Context, s recoil.Summary) { sum = s }
			route, left, err := runChain(t, p, tt.script)
			if got := strings.Join(route, " "); got != tt.route {
				t.Errorf("attempts went to %q, want %q", got, tt.route)
			}
			if got := strings.Join(left, ","); got != tt.left {
				t.Errorf("left %q, want %q", got, tt.left)
			}
			if tt.is == nil && err != nil || tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("DoTarget() = %v, want %v", err, tt.is)
			}
			if sum.Attempts != len(route) {
				t.Errorf("Summary.Attempts = %d, want %d", sum.Attempts, len(route))
			}
			var reports []string
			for _, r := range sum.Targets {
				reports = append(reports, r.String())
			}
			if got := strings.Join(reports, " "); tt.reports != "" && got != tt.reports {
				t.Errorf("Summary.Targets = %q, want %q", got, tt.reports)
			}
			var re *recoil.Error
			if errors.As(err, &re) && len(re.Targets) != len(sum.Targets) {
				t.Errorf("Error.Targets = %v, want the Summary's %v", re.Targets, sum.Targets)
			}
			if sum.Waited < tt.waitedMin || tt.waitedMin == 0 && sum.Waited != 0 {
				t.Errorf("waited %v, want at least %v (and none for a chain of moves)", sum.Waited, tt.waitedMin)
			}
		})
	}
}

// refuseRetries and openBreaker are the conformance suite's.
type refuseRetries = conformance.RefuseRetries

var openBreaker = conformance.OpenBreaker

// step runs one call under p on the explicit clock now: each attempt's
// outcome comes from answer, by target. It returns the Summary's targets.
func step(p *recoil.Policy, now time.Time, answer func(target string) error) string {
	var out string
	p.Observe = func(_ context.Context, s recoil.Summary) {
		var rs []string
		for _, r := range s.Targets {
			rs = append(rs, r.String())
		}
		out = strings.Join(rs, " ")
	}
	c := p.Begin(now, time.Time{})
	for s := c.Next(now); s.Kind == recoil.StepAttempt; s = c.Next(now) {
		err := answer(c.Target().Name)
		if err == nil {
			c.Success(now)
			break
		}
		v, _ := recoil.VerdictOf(err)
		if c.Fail(now, err, v).Kind == recoil.StepDone {
			break
		}
	}
	return out
}

// TestFallbackRemembers: a target that failed in a way that does not heal
// at once is passed over by later calls — until it cools down, or, for a
// refused key, until Restore.
func TestFallbackRemembers(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := targets("a", "b", "c")
	p := &recoil.Policy{Budget: recoil.NoBudget, Fallback: f, MaxAttempts: 5}
	down := map[string]error{"a": statusErr(529, ""), "b": statusErr(401, "invalid_api_key")}
	answer := func(name string) error { return down[name] }
	steps := []struct {
		at   time.Duration
		do   func()
		want string
	}{
		{at: 0, want: "a:1 (overloaded) b:1 (key refused) c:1"},
		{at: time.Second, want: "a:0 (cooling down) b:0 (out until restored) c:1"},
		{at: recoil.DefaultCooldown + time.Second, do: func() { delete(down, "a") }, want: "a:1"},
		{at: recoil.DefaultCooldown + 2*time.Second, do: func() { down["a"] = statusErr(404, "") }, want: "a:1 (model not found) b:0 (out until restored) c:1"},
		{at: recoil.DefaultCooldown + 3*time.Second, do: func() {
			delete(down, "b")
			if !f.Restore("b") || f.Restore("nobody") {
				t.Error("Restore found the wrong targets")
			}
		}, want: "a:0 (cooling down) b:1"},
		{at: recoil.DefaultCooldown + 4*time.Second, do: func() { down["b"] = statusErr(529, "") },
			want: "a:0 (cooling down) b:1 (overloaded) c:1"},
		{at: recoil.DefaultCooldown + 5*time.Second, want: "a:0 (cooling down) b:0 (cooling down) c:1"},
		// The last target overloaded: retried there, as without a Fallback.
		{at: recoil.DefaultCooldown + 6*time.Second, do: func() { down["c"] = statusErr(529, "") },
			want: "a:0 (cooling down) b:0 (cooling down) c:5"},
		// Every target cooling: the one that cools soonest is tried.
		{at: recoil.DefaultCooldown + 7*time.Second, do: func() { delete(down, "b") }, want: "a:0 (cooling down) b:1"},
	}
	for i, s := range steps {
		if s.do != nil {
			s.do()
		}
		if got := step(p, t0.Add(s.at), answer); got != s.want {
			t.Errorf("call %d at %v: targets %q, want %q", i+1, s.at, got, s.want)
		}
	}
	st := f.Status(t0.Add(recoil.DefaultCooldown + 7*time.Second))
	if st[0].Out || st[0].Cooling <= 0 || st[1].Out || st[1].Cooling <= 0 || st[2].Out || st[2].Cooling <= 0 {
		t.Errorf("Status = %+v, want every target cooling", st)
	}
}

// TestFallbackNeedsARouter: Do cannot say where an attempt goes, so a
// policy with a Fallback refuses it before any attempt.
func TestFallbackNeedsARouter(t *testing.T) {
	p := &recoil.Policy{Fallback: targets("a", "b")}
	n := 0
	err := recoil.Do(context.Background(), p, func(context.Context) error { n++; return nil })
	if n != 0 || !errors.Is(err, recoil.ErrNoTarget) || !strings.Contains(err.Error(), "DoTarget") {
		t.Fatalf("Do under a Fallback = %v after %d attempts, want ErrNoTarget naming DoTarget before any", err, n)
	}
	// Without a Fallback, DoTarget's op is given no target.
	err = recoil.DoTarget(context.Background(), &recoil.Policy{}, func(_ context.Context, tg *recoil.Target) error {
		if tg != nil {
			return errors.New("a target without a Fallback")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCallSize pins the Call's size on 64-bit platforms: the simulator
// keeps one per call in flight and walks it on every event. The fallback
// and hedge state (the route) is not in it but beside it or behind a
// pointer, so a call that never falls back carries none of it.
func TestCallSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes pinned for 64-bit platforms")
	}
	if got := unsafe.Sizeof(recoil.Call{}); got != 368 {
		t.Errorf("Call is %d bytes, want 368: the simulator keeps one per call in flight", got)
	}
}

// DoTarget's and GetTarget's first attempt goes to the first target before
// the loop begins. If another call cools that target meanwhile, the
// attempt's failure is still the first target's: the second target, which
// the loop would pick now, is not blamed for it (its breaker, which opens
// on one failure, stays closed), and the retry goes where the attempt
// went.
func TestFirstAttemptOutcomeStaysWithItsTarget(t *testing.T) {
	for _, tt := range []struct {
		name string
		call func(ctx context.Context, p *recoil.Policy, op func(context.Context, *recoil.Target) error) error
	}{
		{"DoTarget", recoil.DoTarget},
		{"GetTarget", func(ctx context.Context, p *recoil.Policy, op func(context.Context, *recoil.Target) error) error {
			_, err := recoil.GetTarget(ctx, p, func(ctx context.Context, t *recoil.Target) (int, error) { return 1, op(ctx, t) })
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 1, OpenDuration: time.Hour}))
			f := &recoil.Fallback{Targets: []recoil.Target{{Name: "a"}, {Name: "b", Breaker: b}}}
			p := &recoil.Policy{Fallback: f, Budget: recoil.NoBudget, Backoff: backoff.Constant(0)}
			other := &recoil.Policy{Fallback: f, Budget: recoil.NoBudget, MaxAttempts: 1}
			f.Status(time.Time{}) // a Fallback in use
			var route []string
			err := tt.call(t.Context(), p, func(ctx context.Context, tg *recoil.Target) error {
				route = append(route, tg.Name)
				if len(route) > 1 {
					return nil
				}
				// Another call finds a overloaded meanwhile: a cools down.
				_ = recoil.DoTarget(ctx, other, func(context.Context, *recoil.Target) error { return statusErr(503, "") })
				return statusErr(500, "")
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(route, " "); got != "a a" {
				t.Errorf("attempts went to %q, want %q", got, "a a")
			}
			if s := b.State(); s != breaker.Closed {
				t.Errorf("b's breaker is %v, want closed: b was blamed for a's failure", s)
			}
		})
	}
}
