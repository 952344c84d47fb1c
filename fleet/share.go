package fleet

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/budget"
)

var _ recoil.Refunder = (*Budget)(nil)

// shareFlush is how many successes a Share holds before writing their
// deposits, as a Ratio holds its requests: four round trips per thousand.
const shareFlush = ratioFlush

// shareState is a Budget's state under package budget's Share semantics,
// in milli-retries. The fields below local are guarded by the Budget's mu.
type shareState struct {
	capMilli, payMilli int64 // the shared balance's capacity, a success's deposit
	leaseN             int64 // retries taken from the shared balance at a time
	local              *budget.Share

	deficit  int64     // the shared deficit (capacity − balance) last read
	credit   int64     // deposits and refunds not yet written
	deposits int64     // successes since credit was last written
	since    time.Time // when the oldest of them was made
	held     int64     // retries leased, not yet spent
	refused  time.Time // until when Redis's refusal stands
}

// initShare sets up Share semantics: the shared balance refuses what
// budget.NewShare refuses, holds what a package budget Share would, and
// the local share keeps Reserve/Replicas with the same Percent.
func (b *Budget) initShare(sc budget.ShareConfig, leaseRetries int64) error {
	sh, err := budget.NewShare(sc)
	if err != nil {
		return err
	}
	st := sh.State() // the configuration resolved, to three decimal places
	s := &shareState{
		capMilli: int64(math.Round(st.Reserve * milli)),
		payMilli: int64(math.Round(st.Percent * milli)),
		leaseN:   leaseRetries,
	}
	if leaseRetries == 0 {
		s.leaseN = b.c.lease(st.Reserve)
	}
	local := budget.ShareConfig{Reserve: st.Reserve / float64(b.c.cfg.Replicas), Percent: st.Percent}
	if local.Reserve == 0 {
		local.Reserve = -1 // none, not the default
	}
	if local.Percent == 0 {
		local.Percent = -1
	}
	s.local = budget.Must(budget.NewShare(local))
	b.share = s
	return nil
}

// shareRetry spends a retry from the lease, refilling it from Redis; while
// Redis is away it asks the local share.
func (b *Budget) shareRetry(now time.Time, c budget.Cause) bool {
	s := b.share
	if !b.c.Shared() {
		// Successes must reach the local share now that it may be
		// drained; the next call to Redis sets the view again.
		b.full.Store(false)
		return s.local.RetryAt(now, c)
	}
	now = clock(now)
	b.mu.Lock()
	if s.held > 0 {
		s.held--
		b.mu.Unlock()
		return true
	}
	refused := now.Before(s.refused)
	b.mu.Unlock()
	if refused {
		return false
	}
	granted, ok := b.shareCall(s.leaseN)
	if !ok {
		b.full.Store(false)
		return s.local.RetryAt(now, c)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s.held += granted
	if s.held > 0 {
		s.held--
		return true
	}
	s.refused = now.Add(b.refresh)
	return false
}

// shareRecord deposits Percent of a retry for a success, up to what this
// process sees missing from the shared balance, and writes the deposits
// every shareFlush successes or once the oldest is Refresh old. The caller
// has returned already for a success while the view is full.
func (b *Budget) shareRecord(now time.Time, o budget.Outcome) {
	s := b.share
	if o.Result != budget.Success || s.payMilli == 0 {
		return
	}
	if !b.c.Shared() {
		s.local.RecordAt(now, o)
		return
	}
	now = clock(now)
	b.mu.Lock()
	if s.deposits == 0 {
		s.since = now
	}
	s.deposits++
	s.credit += max(min(s.payMilli, s.deficit-s.credit), 0)
	flush := s.deposits >= shareFlush || now.Sub(s.since) >= b.refresh
	b.mu.Unlock()
	if flush {
		b.shareCall(0)
	}
}

// shareRefund gives back a retry RetryAt granted that did not go: to the
// lease, up to Lease; beyond it, to the shared balance with the next write.
func (b *Budget) shareRefund(now time.Time, c budget.Cause, n int64) {
	s := b.share
	if !b.c.Shared() {
		s.local.RefundAt(now, c, n)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.held < s.leaseN {
		s.held++
		return
	}
	s.credit += milli
	b.full.Store(false)
}

// shareCall writes the pending credit and takes want retries (gives back
// −want), within the Client's Timeout. It reports what was granted and
// whether Redis answered; unwritten credit is kept for the next call.
func (b *Budget) shareCall(want int64) (int64, bool) {
	deadline := time.Now().Add(b.c.cfg.Timeout)
	if !b.gate.enter(deadline) {
		return 0, false
	}
	defer b.gate.leave()
	s := b.share
	b.mu.Lock()
	credit := s.credit
	s.credit, s.deposits = 0, 0
	b.mu.Unlock()
	var res []int64
	err := b.c.call(deadline, func(ctx context.Context, r redis.UniversalClient) error {
		var err error
		res, err = shareScript.Run(ctx, r, []string{b.key}, credit, s.capMilli, want,
			b.c.cfg.StateTTL.Milliseconds()).Int64Slice()
		return err
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("fleet: the share script returned %d values, want 2", len(res))
	}
	if err != nil {
		s.credit += credit // keep it for when Redis returns
		return 0, false
	}
	s.deficit = res[1]
	b.full.Store(s.deficit == 0 && s.credit == 0)
	return res[0], true
}

// shareGiveBack writes the pending credit and returns the unused lease;
// Close calls it.
func (b *Budget) shareGiveBack() {
	b.mu.Lock()
	n, credit := b.share.held, b.share.credit
	b.share.held = 0
	b.mu.Unlock()
	if n > 0 || credit > 0 {
		b.shareCall(-n)
	}
}

// shareRetries is the balance as this process sees it: the shared one as
// last read, its own unwritten credit included; the local share's while
// Redis is away. b.mu must be held.
func (b *Budget) shareRetries() float64 {
	s := b.share
	if !b.c.Shared() {
		return s.local.State().Retries
	}
	return float64(s.capMilli-max(s.deficit-s.credit, 0)) / milli
}

// shareScript keeps a Share's balance as its deficit, the capacity minus
// the balance, so that a full budget has no key. It adds the credit
// (deposits and refunds) up to the capacity, then grants up to want whole
// retries the balance holds (or, for a negative want, gives them back).
// KEYS: deficit. ARGV: credit and capacity (milli-retries), want, TTL (ms).
// It returns {granted, deficit}.
var shareScript = redis.NewScript(`
local cap = tonumber(ARGV[2])
local d = tonumber(redis.call('GET', KEYS[1]) or '') or 0
d = math.min(math.max(d - tonumber(ARGV[1]), 0), cap)
local want = tonumber(ARGV[3])
local g = want
if want > 0 then g = math.max(math.min(want, math.floor((cap - d) / 1000)), 0) end
d = math.min(math.max(d + 1000 * g, 0), cap)
if d == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], string.format('%.0f', d), 'PX', tonumber(ARGV[4]))
end
return {g, d}
`)
