package audit

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/recoil-go/recoil/tools/sim/blast"
)

// Edge kinds: the format an edge's retry behaviour is read from.
const (
	KindEnvoy  = "envoy"  // an Envoy route configuration (or bootstrap)
	KindGRPC   = "grpc"   // a gRPC service config (JSON)
	KindIstio  = "istio"  // an Istio VirtualService
	KindRecoil = "recoil" // a recoil policy file
	KindNone   = "none"   // a plain call: one attempt, nothing configured
)

var kinds = []string{KindEnvoy, KindGRPC, KindIstio, KindNone, KindRecoil}

// Retry is what one edge does to a call: its attempts, its waits, what
// bounds its time and its retries — read from the edge's configuration,
// each value with the Source it came from (the zero Source for a value the
// format's default supplies). It is plain data, safe to copy and share.
type Retry struct {
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// At is the retry configuration: the Envoy route, the gRPC
	// methodConfig, the Istio http route, the recoil policy file.
	At Source `json:"at,omitzero"`
	// Attempts is the most attempts one call makes, the first included
	// (gRPC's maxAttempts, capped at 5 as gRPC does; Envoy's and Istio's
	// retries plus one; recoil's max_attempts).
	Attempts   int    `json:"attempts"`
	AttemptsAt Source `json:"attempts_at,omitzero"`
	// Capped says the configuration asked for more attempts than the
	// client makes (gRPC's maxAttempts above 5); Asked is what it asked.
	Capped bool `json:"capped,omitempty"`
	Asked  int  `json:"asked,omitempty"`
	// Hedged marks hedging — gRPC's hedgingPolicy, Envoy's hedge_policy
	// with hedge_on_per_try_timeout —: the attempts are sent HedgeDelay
	// apart (Envoy: each per-try timeout) without waiting for the first.
	Hedged     bool          `json:"hedged,omitempty"`
	HedgeDelay time.Duration `json:"-"`
	// RetryOn is what is retried: Envoy's and Istio's retry_on conditions,
	// gRPC's retryable (or, hedging, non-fatal) status codes, recoil's
	// classify mode; StatusCodes are Envoy's retriable_status_codes (and
	// the codes an Istio retryOn lists).
	RetryOn     []string `json:"retry_on,omitempty"`
	StatusCodes []int    `json:"status_codes,omitempty"`
	// Protocol is the edge's protocol, ProtocolHTTP or ProtocolGRPC: which
	// of Envoy's conditions apply.
	Protocol string `json:"protocol,omitempty"`
	// On are the failure classes (Classes) the edge retries; a class it
	// does not retry gets one attempt.
	On []string `json:"on"`
	// PerTry bounds each attempt; zero means nothing does.
	PerTry   time.Duration `json:"-"`
	PerTryAt Source        `json:"per_try_at,omitzero"`
	// Timeout bounds the whole call, retries and waits included; zero
	// means nothing in this configuration does. TimeoutDefault says it
	// is the format's default (Envoy's 15 s), written nowhere.
	Timeout        time.Duration `json:"-"`
	TimeoutAt      Source        `json:"timeout_at,omitzero"`
	TimeoutDefault bool          `json:"timeout_default,omitempty"`
	// Waits are the schedule's longest waits before retries 1…Attempts−1.
	Waits []time.Duration `json:"-"`
	// ServerWait is the longest wait a server can ask for (Retry-After)
	// that the client honours in place of its own; zero means none.
	ServerWait time.Duration `json:"-"`
	// Jitter says whether the waits are randomised; JitterAt is where the
	// schedule is written (zero: the format's default), JitterNote why.
	Jitter     bool   `json:"jitter"`
	JitterAt   Source `json:"jitter_at,omitzero"`
	JitterNote string `json:"jitter_note"`
	// Budget bounds the edge's retries over time, if anything does.
	Budget Budget `json:"budget"`
	// Hop is the hop protocol's edge budget a recoil policy sets for the
	// call tree below it (policy field hop); zero means none.
	Hop   int    `json:"hop,omitempty"`
	HopAt Source `json:"hop_at,omitzero"`
	// Propagates says the edge passes the caller's deadline on to the
	// callee (gRPC, the hop protocol).
	Propagates bool `json:"propagates_deadline,omitempty"`
	// IstioDefault says an Istio route has no retries field: the
	// sidecar's default retry policy applies (SidecarDefault).
	IstioDefault bool `json:"istio_default,omitempty"`
	// Notes are what the audit read that does not change its figures
	// (outlier detection, a host predicate), in the configuration's words.
	Notes []string `json:"notes,omitempty"`
}

// Budget is what bounds an edge's retries over time: a ratio of the
// calls (Envoy's retry_budget, recoil's ratio budget) or a token bucket
// that drains under failure (gRPC's retryThrottling, recoil's default
// budget). The zero Budget is none.
type Budget struct {
	// Kind names it: "" (none), "ratio", "share" or "token-bucket".
	Kind string `json:"kind,omitempty"`
	// RetryRatio is a ratio or share budget's share; ThrottleRatio a token bucket's
	// token ratio (see blast.Layer).
	RetryRatio    float64 `json:"retry_ratio,omitempty"`
	ThrottleRatio float64 `json:"throttle_ratio,omitempty"`
	// InFlight caps the retries in flight at once (Envoy's circuit
	// breaker max_retries, a DestinationRule's connectionPool.http
	// maxRetries); zero means nothing does. Once a failure lasts at
	// Options.InFlight calls in flight, the cap lets InFlight of them
	// retry: a ratio of InFlight/Options.InFlight.
	InFlight   int    `json:"in_flight,omitempty"`
	InFlightAt Source `json:"in_flight_at,omitzero"`
	// Describe says what it is, in the configuration's words.
	Describe string `json:"describe,omitempty"`
	At       Source `json:"at,omitzero"`
}

// Budget kinds.
const (
	BudgetRatio       = "ratio"
	BudgetTokenBucket = "token-bucket"
	// BudgetShare is recoil's default (budget.Share): retries at most
	// RetryRatio of the successful attempts.
	BudgetShare = "share"
)

// Retries says whether the edge retries failure class c.
func (r *Retry) Retries(c string) bool {
	return (r.Hedged && r.Kind == KindGRPC) || slices.Contains(r.On, c)
}

// AttemptsFor is the most attempts one call makes when every attempt
// fails with class c: Attempts if the edge retries c, else 1.
func (r *Retry) AttemptsFor(c string) int {
	if r.Retries(c) {
		return r.Attempts
	}
	return 1
}

// layer is the edge as the layered model of package blast reads it, for
// failure class c, a cap on retries in flight priced at inFlight calls.
func (r *Retry) layer(c string, inFlight float64) blast.Layer {
	l := blast.Layer{Retries: max(r.AttemptsFor(c)-1, 0)}
	for _, w := range r.Waits {
		if w > 0 {
			l.Backoff = true
		}
	}
	switch r.Budget.Kind {
	case BudgetRatio:
		l.RetryRatio = r.Budget.RetryRatio
		if l.RetryRatio <= 0 {
			l.Retries = 0 // a budget of no share: sustained, no retries
		}
	case BudgetTokenBucket:
		l.ThrottleRatio = r.Budget.ThrottleRatio
	case BudgetShare:
		l.SuccessRatio = r.Budget.RetryRatio
		if l.SuccessRatio <= 0 {
			l.Retries = 0 // a budget of no share: sustained, no retries
		}
	default:
		if r.Budget.InFlight > 0 && inFlight > 0 && l.Retries > 0 {
			l.RetryRatio = math.Min(float64(r.Budget.InFlight)/inFlight, float64(l.Retries))
		} else if r.Budget.InFlightAt.File != "" && r.Budget.InFlight == 0 {
			l.Retries = 0 // max_retries: 0 lets no retry through
		}
	}
	return l
}

// countLayer is the layer for counting attempts, not pricing a rate:
// backoff spreads retries over time but does not make fewer of them.
func (r *Retry) countLayer(c string, inFlight float64) blast.Layer {
	l := r.layer(c, inFlight)
	l.Backoff = false
	return l
}

// wait is the longest wait before retry k (1-based).
func (r *Retry) wait(k int) time.Duration {
	w := r.ServerWait
	if k-1 < len(r.Waits) {
		w = max(w, r.Waits[k-1])
	}
	return w
}

// sustained is the attempts a call makes once the budget is spent and
// every attempt fails with class c: Attempts with no budget, 1 + the
// ratio with a ratio budget, 1 once a token bucket has drained.
func (r *Retry) sustained(c string, inFlight float64) float64 {
	a, _ := r.countLayer(c, inFlight).Expect(1)
	return a
}

// waitsCeiling returns the ceilings c_k of an exponential schedule for
// retries 1…attempts−1, with blast's arithmetic.
func waitsCeiling(attempts int, base time.Duration, multiplier float64, max time.Duration) []time.Duration {
	var w []time.Duration
	for k := 1; k < attempts; k++ {
		w = append(w, blast.Ceiling(k, base, multiplier, max))
	}
	return w
}

// trimFloat prints x with up to six decimals, trailing zeros dropped.
func trimFloat(x float64) string {
	s := strconv.FormatFloat(x, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// ms is d in float milliseconds, the unit of every recoil -json output.
func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }

// MarshalJSON writes the durations in float milliseconds (per_try_ms,
// timeout_ms, waits_ms, server_wait_ms, hedge_delay_ms), the convention
// of every recoil -json output; a zero per_try_ms or timeout_ms is none.
func (r Retry) MarshalJSON() ([]byte, error) {
	type fields Retry
	waits := make([]float64, len(r.Waits))
	for i, w := range r.Waits {
		waits[i] = ms(w)
	}
	return json.Marshal(struct {
		fields
		PerTryMS     float64   `json:"per_try_ms"`
		TimeoutMS    float64   `json:"timeout_ms"`
		WaitsMS      []float64 `json:"waits_ms"`
		ServerWaitMS float64   `json:"server_wait_ms"`
		HedgeDelayMS float64   `json:"hedge_delay_ms"`
	}{fields(r), ms(r.PerTry), ms(r.Timeout), waits, ms(r.ServerWait), ms(r.HedgeDelay)})
}
