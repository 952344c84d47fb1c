package audit

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/tools/policyspec"
	"github.com/recoil-go/recoil/tools/sim/blast"
)

// parseRecoil reads the retry behaviour of a recoil policy file (package
// policyspec: every problem is an error naming file, line and field):
// max_attempts, backoff and overload_backoff, max_server_wait, timeout,
// attempt_timeout, budget, classify and hop, each left-out field read as
// recoil's default.
func parseRecoil(file string, data []byte) (Retry, error) {
	s, err := policyspec.Parse(file, data)
	if err != nil {
		return Retry{}, err
	}
	at := func(field string) Source {
		if l, ok := s.Pos.Lines[field]; ok {
			return Source{File: file, Line: l}
		}
		return Source{}
	}
	out := Retry{Kind: KindRecoil, At: Source{File: file, Line: max(s.Pos.Line, 1)}, Propagates: true,
		Attempts: s.MaxAttempts, AttemptsAt: at("max_attempts"),
		PerTry: s.AttemptTimeout, PerTryAt: at("attempt_timeout"),
		Timeout: s.Timeout, TimeoutAt: at("timeout"),
		Hop: s.Hop, HopAt: at("hop")}
	if out.Attempts == 0 {
		out.Attempts = recoil.DefaultMaxAttempts
	}
	recoilWaits(&s, &out)
	out.Jitter, out.JitterNote = true, "recoil's default backoff: full jitter from 100ms"
	out.JitterAt = at("backoff")
	if b := s.Backoff; b != nil {
		switch b.Kind {
		case policyspec.BackoffNone:
			out.Jitter, out.JitterNote = false, "backoff: none retries at once"
		case policyspec.BackoffConstant, policyspec.BackoffExponential:
			out.Jitter, out.JitterNote = false, fmt.Sprintf("backoff: %s waits the same time on every caller", b.Kind)
		case policyspec.BackoffProportional:
			out.Jitter, out.JitterNote = b.Jitter > 0, fmt.Sprintf("backoff: proportional, jitter %s", trimFloat(b.Jitter))
		default:
			out.JitterNote = "backoff: " + b.Kind
		}
	}
	out.Budget = recoilBudget(s.Budget, file, at("budget"))
	return out, nil
}

// recoilWaits sets what a policy retries and its waits, by its classify
// mode. The default retries every class: a 500 or a reset after the
// backoff, a 503 or a 429 after the overload backoff (overload_backoff, or
// recoil's default from 1 s) or a server's Retry-After up to
// max_server_wait, plus the spread recoil adds to it. retry-everything retries every class on backoff alone,
// Retry-After ignored. timeouts retries none of them: an answer is final,
// only the caller's own timeouts are retried (on backoff).
func recoilWaits(s *policyspec.Spec, out *Retry) {
	out.On, out.RetryOn = slices.Clone(Classes), []string{s.Classify}
	if s.Classify == "" || s.Classify == policyspec.ClassifyDefault {
		out.RetryOn = []string{"transient", "overloaded (after Retry-After)"}
		w := s.MaxServerWait
		if w == 0 {
			w = recoil.DefaultMaxServerWait
		}
		// Policy.Decide honours a Retry-After up to max_server_wait and adds
		// up to a tenth more, at most a second, so that clients told the
		// same instant do not all return at it.
		out.ServerWait = w + min(w/10, time.Second)
	}
	if s.Classify == policyspec.ClassifyTimeouts {
		out.On = []string{}
	}
	def := recoil.DefaultBackoff()
	over := recoil.DefaultOverloadBackoff()
	for k := 1; k < out.Attempts; k++ {
		w := blast.Ceiling(k, def.Base, def.Multiplier, def.Max)
		if s.Backoff != nil {
			w = specCeiling(s.Backoff, k)
		}
		if out.ServerWait > 0 { // the default mode: overloaded classes wait on the overload schedule
			o := blast.Ceiling(k, over.Base, over.Multiplier, over.Max)
			if s.OverloadBackoff != nil {
				o = specCeiling(s.OverloadBackoff, k)
			}
			w = max(w, o)
		}
		out.Waits = append(out.Waits, min(w, maxDuration))
	}
}

// specCeiling is the longest wait before retry k under schedule b.
func specCeiling(b *policyspec.Backoff, k int) time.Duration {
	switch b.Kind {
	case policyspec.BackoffNone:
		return 0
	case policyspec.BackoffConstant:
		return b.Base
	case policyspec.BackoffDecorrelated:
		// Each wait is drawn below three times the one before.
		c := blast.Ceiling(k+1, b.Base, 3, b.Max)
		return c
	case policyspec.BackoffProportional:
		c := blast.Ceiling(k, b.Base, b.Multiplier, 0)
		c = time.Duration(math.Min(float64(c)*(1+b.Jitter), float64(maxDuration)))
		if b.Max > 0 {
			c = min(c, b.Max)
		}
		return c
	}
	return blast.Ceiling(k, b.Base, b.Multiplier, b.Max)
}

// recoilBudget describes a policy's budget as the layered model reads it.
func recoilBudget(b *policyspec.Budget, file string, at Source) Budget {
	if at.File == "" {
		at = Source{File: file}
	}
	if b == nil || b.Kind == policyspec.BudgetDefault {
		return Budget{Kind: BudgetShare, RetryRatio: budget.DefaultSharePercent, At: at,
			Describe: fmt.Sprintf("recoil's default budget: retries at most %s%% of successful attempts, plus a reserve of %d", trimFloat(100*budget.DefaultSharePercent), budget.DefaultShareReserve)}
	}
	scope := ""
	if b.Scope == policyspec.ScopeFleet {
		scope = ", shared by the fleet"
	}
	switch b.Kind {
	case policyspec.BudgetNone:
		return Budget{Describe: "budget: none", At: at}
	case "", policyspec.BudgetTokenBucket:
		tokens, ratio := b.MaxTokens, b.TokenRatio
		if tokens == 0 {
			tokens = budget.DefaultMaxTokens
		}
		if ratio == 0 {
			ratio = budget.DefaultTokenRatio
		}
		return Budget{Kind: BudgetTokenBucket, ThrottleRatio: ratio, At: at,
			Describe: fmt.Sprintf("token bucket of %s, %s back per success%s; retries stop at half", trimFloat(tokens), trimFloat(ratio), scope)}
	case policyspec.BudgetShare:
		pct := percentOr(b.Percent, budget.DefaultSharePercent)
		return Budget{Kind: BudgetShare, RetryRatio: pct, At: at,
			Describe: fmt.Sprintf("share budget: retries at most %s%% of successful attempts%s, plus a reserve", trimFloat(100*pct), scope)}
	case policyspec.BudgetRatio:
		pct := percentOr(b.Percent, budget.DefaultPercent)
		return Budget{Kind: BudgetRatio, RetryRatio: pct, At: at,
			Describe: fmt.Sprintf("ratio budget: retries at most %s%% of requests%s, plus a reserve", trimFloat(100*pct), scope)}
	case policyspec.BudgetQuota:
		cost, inc := b.RetryCost, b.NoRetryIncrement
		if cost <= 0 {
			cost = budget.DefaultRetryCost
		}
		if inc <= 0 {
			inc = budget.DefaultNoRetryIncrement
		}
		// A success refunds inc where a retry costs cost: a token bucket of
		// ratio inc/cost.
		return Budget{Kind: BudgetTokenBucket, ThrottleRatio: float64(inc) / float64(cost), At: at,
			Describe: fmt.Sprintf("retry quota: a retry costs %d, a success returns %d%s", cost, inc, scope)}
	case policyspec.BudgetAdaptive:
		k := b.K
		if k == 0 {
			k = budget.DefaultK
		}
		// The throttle lets about K requests through per accepted one: it
		// starts refusing once more than 1 − 1/K of them fail, which is a
		// token bucket's threshold at ratio K − 1.
		return Budget{Kind: BudgetTokenBucket, ThrottleRatio: math.Max(k-1, 1e-9), At: at,
			Describe: fmt.Sprintf("adaptive throttle, K = %s%s", trimFloat(k), scope)}
	}
	return Budget{Describe: "budget: " + b.Kind, At: at}
}

// percentOr is a budget's percent as written, def when it is zero, and
// zero when negative (none).
func percentOr(pct, def float64) float64 {
	if pct == 0 {
		return def
	}
	return math.Max(pct, 0)
}
