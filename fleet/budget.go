package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/recoil-go/recoil/budget"
)

// DefaultRefresh bounds how stale a process's view of a shared token bucket
// may be when it asks about a retry, how long a Ratio or a Share holds
// deposits before writing them, and how long a Share remembers a refusal.
const DefaultRefresh = 100 * time.Millisecond

// ratioFlush is how many deposits a Ratio holds before writing them: four
// round trips per thousand calls.
const ratioFlush = 250

// Fixed-point scales, as in package budget: a token is 1000 milli-tokens, a
// retry is a million units of a Ratio's balance.
const (
	milli      = 1000
	retryUnits = 1_000_000
)

// BudgetConfig configures a Budget. Zero fields mean the documented
// defaults; Name is required. At most one of Share, TokenBucket and Ratio
// may be set; with none, the budget has package budget's Share semantics
// with its defaults, recoil's default retry budget.
type BudgetConfig struct {
	// Name identifies the budget in Redis: every process that names it
	// shares it. Name it for the dependency, "org-42/openai" say.
	Name string
	// Share configures package budget's Share semantics, with its defaults
	// for zero fields: every success pays Percent of a retry, every retry
	// takes one, the balance holds at most Reserve. Nil, with TokenBucket
	// and Ratio nil too, means the defaults.
	Share *budget.ShareConfig
	// TokenBucket, if set, selects gRFC A6's semantics, package budget's
	// TokenBucket, with its defaults for zero fields: &TokenBucketConfig{}
	// is A6's bucket of 100 tokens. The 1000-token cap grpc-go enforces
	// does not apply: a fleet's bucket may be larger.
	TokenBucket *budget.TokenBucketConfig
	// Ratio, if set, selects Finagle's semantics, package budget's Ratio,
	// with its defaults for zero fields.
	Ratio *budget.RatioConfig
	// Lease is how much a process holds back locally: for a token bucket,
	// how many tokens of failures (or successes) it counts before writing
	// them; for a Ratio or a Share, how many retries it takes at a time.
	// Zero means the Client's LeaseShare of MaxTokens, or of the Ratio's
	// or the Share's reserve, at least one.
	Lease int64
	// Refresh bounds how stale a process's view of a token bucket may be
	// when it asks about a retry, how long a Ratio or a Share holds
	// deposits, and how long a Share remembers that Redis refused a retry;
	// zero or less means DefaultRefresh.
	Refresh time.Duration
}

// Budget is a retry budget whose state every process naming it shares
// through Redis: package budget's Share (the default), TokenBucket (gRFC
// A6) or Ratio (Finagle) across the fleet, so an autoscaled fleet's
// retries stay bounded as one process's are. It implements recoil.Budget
// and recoil.Refunder: set it as Policy.Budget, or pass it to
// Allowance.Guard.
//
// Share. Every success pays Percent of a retry into the shared balance,
// every retry takes one out, and the balance holds at most Reserve, as in
// package budget; first attempts are never refused. A success while the
// process's view of the balance is full writes nothing (one atomic load, so
// the healthy path costs no round trip); otherwise its deposit is written in
// batches of 250 successes or with the first one Refresh after the oldest.
// Retries are taken from the shared balance Lease at a time and spent
// locally; a refused lease is not asked for again within Refresh, and the
// unused retries go back on Close. Over any stretch of time the fleet's
// retries are at most Reserve + Percent × (successes in the stretch) +
// replicas × Lease: the leases in hand when it began.
//
// Token bucket. Failures take a token and successes put back TokenRatio, as
// in package budget; a retry may go while the shared balance is above half.
// A process writes its failures and successes in batches of Lease tokens (a
// success while its view of the bucket is full writes nothing, so the
// healthy path costs no round trip), and re-reads the bucket when asked
// about a retry if its view is older than Refresh. Each process's view is
// thus off by at most Lease tokens of its own and Refresh of the others',
// and the fleet's balance by at most replicas × Lease tokens.
//
// Ratio. Each call deposits Percent of a retry, written in batches of 250
// or every Refresh; retries are taken from the shared balance Lease at a
// time and spent locally (unused ones go back on Close, or expire with the
// window). The window is the same ten slices of TTL/10 as package budget's,
// dated by the Redis server's clock; the retries the fleet makes in a window
// exceed the budget's bound by at most replicas × Lease.
//
// When Redis cannot answer within the Client's Timeout, a decision is made
// in that same call from the local share — package budget's own Share with
// Reserve/Replicas, TokenBucket with MaxTokens/Replicas, or Ratio with
// MinRetriesPerSec/Replicas, each with the same Percent or TokenRatio —
// until the Client's probe finds Redis again.
//
// The zero Budget is not usable; make one with Client.Budget. A Budget is
// safe for concurrent use.
type Budget struct {
	c       *Client
	key     string
	refresh time.Duration
	gate    gate

	// Token bucket, in milli-tokens.
	maxMilli, ratioMilli, leaseMilli int64
	full                             atomic.Bool // the view is full: a success writes nothing
	localBucket                      *budget.TokenBucket

	// Ratio, in retryUnits.
	ratio            bool
	width            time.Duration
	reserve, deposit int64
	leaseN           int64
	localRatio       *budget.Ratio

	share *shareState // non-nil for Share semantics

	mu       sync.Mutex
	deficit  int64     // token bucket: the shared deficit last read
	pending  int64     // token bucket: this process's change not yet written
	synced   time.Time // token bucket: when deficit was read
	deposits int64     // ratio: deposits not yet written
	since    time.Time // ratio: when the oldest of them was made
	lease    lease     // ratio: retries taken, not yet spent
}

// Budget returns the shared retry budget configured by b, reporting bad
// configuration. It does not contact Redis.
func (c *Client) Budget(b BudgetConfig) (*Budget, error) {
	if b.Name == "" {
		return nil, errors.New("fleet: a budget needs a Name")
	}
	if b.Lease < 0 {
		return nil, fmt.Errorf("fleet: budget %q: Lease %d is negative", b.Name, b.Lease)
	}
	if b.Refresh <= 0 {
		b.Refresh = DefaultRefresh
	}
	if (b.Share != nil && b.TokenBucket != nil) || (b.Share != nil && b.Ratio != nil) || (b.TokenBucket != nil && b.Ratio != nil) {
		return nil, fmt.Errorf("fleet: budget %q: set one of Share, TokenBucket and Ratio, not several", b.Name)
	}
	if b.Ratio != nil {
		// The shared Ratio refuses what budget.NewRatio refuses, so that
		// the local Ratio built from it below cannot be refused.
		if _, err := budget.NewRatio(*b.Ratio); err != nil {
			return nil, fmt.Errorf("fleet: budget %q: %w", b.Name, err)
		}
	}
	bu := &Budget{c: c, key: c.key(b.Name, "budget"), refresh: b.Refresh, gate: newGate()}
	switch {
	case b.Ratio != nil:
		bu.initRatio(*b.Ratio, b.Lease)
	case b.TokenBucket != nil:
		bu.initBucket(*b.TokenBucket, b.Lease)
	default:
		var sc budget.ShareConfig
		if b.Share != nil {
			sc = *b.Share
		}
		if err := bu.initShare(sc, b.Lease); err != nil {
			return nil, fmt.Errorf("fleet: budget %q: %w", b.Name, err)
		}
	}
	bu.full.Store(true)
	if !c.register(bu.giveBack) {
		return nil, ErrClosed
	}
	return bu, nil
}

func (b *Budget) initBucket(tc budget.TokenBucketConfig, leaseTokens int64) {
	b.maxMilli, b.ratioMilli = budget.DefaultMaxTokens*milli, budget.DefaultTokenRatio*milli
	if tc.MaxTokens > 0 && tc.MaxTokens < 1<<40 { // false for NaN and +Inf
		b.maxMilli = max(int64(math.Round(tc.MaxTokens*milli)), 1)
	}
	if tc.TokenRatio > 0 && tc.TokenRatio < 1<<40 {
		b.ratioMilli = max(int64(math.Round(tc.TokenRatio*milli)), 1)
	}
	b.leaseMilli = leaseTokens * milli
	if leaseTokens == 0 {
		b.leaseMilli = max(int64(b.c.cfg.LeaseShare*float64(b.maxMilli)), milli)
	}
	share := float64(b.maxMilli) / milli / float64(b.c.cfg.Replicas)
	// A local bucket holds at most the 1000 tokens of gRPC's bound.
	b.localBucket = budget.Must(budget.NewTokenBucket(budget.TokenBucketConfig{MaxTokens: min(share, 1000), TokenRatio: float64(b.ratioMilli) / milli}))
}

func (b *Budget) initRatio(rc budget.RatioConfig, leaseRetries int64) {
	b.ratio = true
	ttl := rc.TTL
	if ttl <= 0 {
		ttl = budget.DefaultRatioTTL
	}
	perSec := rc.MinRetriesPerSec
	if perSec == 0 {
		perSec = budget.DefaultMinRetriesPerSec
	}
	perSec = max(perSec, 0)
	percent := rc.Percent
	if percent == 0 {
		percent = budget.DefaultPercent
	}
	if !(percent > 0) { // negative or NaN: no share
		percent = 0
	}
	b.width = ttl / 10
	reserve := math.Floor(min(float64(perSec)*ttl.Seconds(), 1<<40))
	b.reserve = int64(reserve) * retryUnits
	b.deposit = int64(math.Round(min(percent, 1000) * retryUnits))
	b.leaseN = leaseRetries
	if leaseRetries == 0 {
		b.leaseN = b.c.lease(reserve)
	}
	localPerSec := perSec / b.c.cfg.Replicas
	if localPerSec == 0 {
		localPerSec = -1 // no reserve, not the default
	}
	localPercent := percent
	if localPercent == 0 {
		localPercent = -1
	}
	b.localRatio = budget.Must(budget.NewRatio(budget.RatioConfig{TTL: ttl, MinRetriesPerSec: localPerSec, Percent: localPercent}))
}

// AdmitAt reports whether a call's first attempt may go: always, as in
// package budget. A Ratio deposits Percent of a retry, written to Redis in
// batches.
func (b *Budget) AdmitAt(now time.Time) bool {
	if !b.ratio {
		return true
	}
	if !b.c.Shared() {
		return b.localRatio.AdmitAt(now)
	}
	now = clock(now)
	b.mu.Lock()
	if b.deposits == 0 {
		b.since = now
	}
	b.deposits++
	flush := b.deposits >= ratioFlush || now.Sub(b.since) >= b.refresh
	b.mu.Unlock()
	if flush {
		b.ratioCall(now, 0)
	}
	return true
}

// RetryAt reports whether a retry may go, charging it if so: a token
// bucket reads its view of the shared balance (re-read if older than
// Refresh), a Ratio or a Share spends a retry from its lease, taking a new
// one from Redis when it is spent. The cause is unused, as in package
// budget.
func (b *Budget) RetryAt(now time.Time, c budget.Cause) bool {
	if b.share != nil {
		return b.shareRetry(now, c)
	}
	if !b.c.Shared() {
		return b.local().RetryAt(now, c)
	}
	now = clock(now)
	if b.ratio {
		return b.ratioRetry(now, c)
	}
	b.mu.Lock()
	stale := now.Sub(b.synced) >= b.refresh
	b.mu.Unlock()
	if stale && !b.sync(now) {
		return b.localBucket.RetryAt(now, c)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return 2*(b.maxMilli-b.view()) > b.maxMilli
}

// RecordAt reports an attempt's outcome: for a token bucket, a failure
// takes a token and a success puts back TokenRatio; for a Share, a success
// deposits Percent of a retry. A success while the view is full is one
// atomic load. A Ratio ignores outcomes, and a Share all but successes.
func (b *Budget) RecordAt(now time.Time, o budget.Outcome) {
	if b.ratio || (o.Result == budget.Success && b.full.Load()) {
		return
	}
	if b.share != nil {
		b.shareRecord(now, o)
		return
	}
	if !b.c.Shared() {
		// Successes must reach the local bucket now that failures drain
		// it; the next sync sets the view again.
		b.full.Store(false)
		b.localBucket.RecordAt(now, o)
		return
	}
	b.mu.Lock()
	v := b.view()
	switch o.Result {
	case budget.Success:
		b.pending -= min(b.ratioMilli, v)
	case budget.Failure, budget.Overload:
		b.pending += min(milli, b.maxMilli-v)
	}
	b.full.Store(b.view() == 0)
	flush := b.pending >= b.leaseMilli || -b.pending >= b.leaseMilli
	b.mu.Unlock()
	if flush {
		b.sync(clock(now))
	}
}

// RefundAt gives back a retry RetryAt granted that then did not go (a
// later guard refused it, recoil.Refunder). A Share puts it back into the
// process's lease, up to Lease, and beyond that into the shared balance
// with its next write, as package budget's Share gives it back; a token
// bucket and a Ratio, whose package budget counterparts keep what they
// charged, change nothing.
func (b *Budget) RefundAt(now time.Time, c budget.Cause, n int64) {
	if b.share != nil {
		b.shareRefund(now, c, n)
	}
}

// view is this process's view of the shared deficit. b.mu must be held.
func (b *Budget) view() int64 { return min(max(b.deficit+b.pending, 0), b.maxMilli) }

func (b *Budget) local() interface {
	RetryAt(time.Time, budget.Cause) bool
} {
	if b.ratio {
		return b.localRatio
	}
	return b.localBucket
}

// sync writes the token bucket's pending change and reads the shared
// deficit, within the Client's Timeout; false if Redis did not answer.
func (b *Budget) sync(now time.Time) bool {
	deadline := time.Now().Add(b.c.cfg.Timeout)
	if !b.gate.enter(deadline) {
		return false
	}
	defer b.gate.leave()
	b.mu.Lock()
	delta := b.pending
	b.pending = 0
	b.mu.Unlock()
	var d int64
	err := b.c.call(deadline, func(ctx context.Context, r redis.UniversalClient) error {
		var err error
		d, err = bucketScript.Run(ctx, r, []string{b.key}, delta, b.maxMilli, b.c.cfg.StateTTL.Milliseconds()).Int64()
		return err
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.pending += delta // keep it for when Redis returns
		return false
	}
	b.deficit, b.synced = d, now
	b.full.Store(b.view() == 0)
	return true
}

// ratioRetry spends a retry from the lease, refilling it from Redis.
func (b *Budget) ratioRetry(now time.Time, c budget.Cause) bool {
	b.mu.Lock()
	if b.lease.take(now, 1) {
		b.mu.Unlock()
		return true
	}
	refused := now.Before(b.lease.refused)
	b.mu.Unlock()
	if refused {
		return false
	}
	granted, ok := b.ratioCall(now, b.leaseN)
	if !ok {
		return b.localRatio.RetryAt(now, c)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lease.grant(now, granted, b.width)
	if b.lease.take(now, 1) {
		return true
	}
	b.lease.refused = now.Add(min(b.refresh, b.width))
	return false
}

// ratioCall writes the pending deposits and takes want retries (gives
// back −want), within the Client's Timeout. It reports what was granted and
// whether Redis answered.
func (b *Budget) ratioCall(now time.Time, want int64) (int64, bool) {
	deadline := time.Now().Add(b.c.cfg.Timeout)
	if !b.gate.enter(deadline) {
		return 0, false
	}
	defer b.gate.leave()
	b.mu.Lock()
	deposits := b.deposits
	b.deposits = 0
	b.mu.Unlock()
	var res []int64
	err := b.c.call(deadline, func(ctx context.Context, r redis.UniversalClient) error {
		var err error
		res, err = ratioScript.Run(ctx, r, []string{b.key}, b.width.Microseconds(), b.reserve, b.deposit,
			deposits, want, (10*b.width + b.width).Milliseconds()).Int64Slice()
		return err
	})
	if err != nil || len(res) != 2 {
		b.mu.Lock()
		b.deposits += deposits
		b.mu.Unlock()
		return 0, false
	}
	return res[0], true
}

// giveBack writes what the process holds back, and returns a Ratio's
// unused retries; Close calls it.
func (b *Budget) giveBack(context.Context) {
	now := time.Now()
	if b.share != nil {
		b.shareGiveBack()
		return
	}
	if !b.ratio {
		b.sync(now)
		return
	}
	b.mu.Lock()
	n := b.lease.left(now)
	b.lease = lease{}
	b.mu.Unlock()
	b.ratioCall(now, -n)
}

// BudgetState is a snapshot of a Budget's view, for tests and metrics.
type BudgetState struct {
	// Tokens is a token bucket's balance as this process sees it, its own
	// unwritten changes included.
	Tokens float64
	// Retries is a Share's balance as this process sees it: the shared
	// balance as last read, its own unwritten deposits included (the local
	// share's while Shared is false).
	Retries float64
	// Leased is how many retries a Ratio's or a Share's lease holds.
	Leased int64
	// Shared reports whether decisions use Redis (false: the local share).
	Shared bool
}

// StateAt returns a snapshot at now; the zero now means the current time.
func (b *Budget) StateAt(now time.Time) BudgetState {
	now = clock(now)
	b.mu.Lock()
	defer b.mu.Unlock()
	s := BudgetState{Leased: b.lease.left(now), Shared: b.c.Shared()}
	switch {
	case b.share != nil:
		s.Retries, s.Leased = b.shareRetries(), b.share.held
	case !b.ratio:
		s.Tokens = float64(b.maxMilli-b.view()) / milli
	}
	return s
}
