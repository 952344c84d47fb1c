package hop

import (
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil/budget"
)

// Account is the retry budget of one incoming request at one hop, shared by
// everything the hop does to serve that request: every call it makes, every
// attempt of each, concurrently or not. It starts with the budget the request
// carried (or the hop's own, at an edge), is spent by the hop's retries and
// by the retries reported from below, and knows how many retries to report
// upward.
//
// The zero value is an account with a budget of 0: it allows no retries.
// An Account is safe for concurrent use; its methods are lock-free and do
// not allocate. It must not be copied after first use.
type Account struct {
	remaining atomic.Int64 // in [0, MaxBudget]
	spent     atomic.Int64 // at and below this hop; only grows
}

// NewAccount returns an account holding budget retries, clamped to
// [0, MaxBudget].
func NewAccount(budget int) *Account {
	a := new(Account)
	a.remaining.Store(int64(clamp(budget, MaxBudget)))
	return a
}

// Remaining returns the retries left for this request's whole call tree
// below the caller: the value to send as the budget ([Request.Budget]) on
// the next call or attempt.
func (a *Account) Remaining() int {
	return int(a.remaining.Load())
}

// TrySpend spends one retry at this hop and reports true, if any remain;
// otherwise it spends nothing and reports false, and the hop must not retry.
// Call it before each retry, not before a first attempt.
func (a *Account) TrySpend() bool {
	for {
		r := a.remaining.Load()
		if r <= 0 {
			return false
		}
		if a.remaining.CompareAndSwap(r, r-1) {
			a.spent.Add(1)
			return true
		}
	}
}

// Below records that a response reported spent retries made below this hop
// ([Response.Spent]): they come off the remaining budget, which stops at 0,
// and are added in full to [Account.Spent], since they were made whether or
// not this hop had them to give. A spent of 0 or less changes nothing; one
// above MaxBudget counts as MaxBudget.
func (a *Account) Below(spent int) {
	if spent <= 0 {
		return
	}
	s := int64(min(spent, MaxBudget))
	a.spent.Add(s)
	for {
		r := a.remaining.Load()
		if r <= 0 || a.remaining.CompareAndSwap(r, max(r-s, 0)) {
			return
		}
	}
}

// Spent returns the retries made at and below this hop so far: the value to
// report upward ([Response.Spent]) when the request is answered.
func (a *Account) Spent() int {
	return int(a.spent.Load())
}

// AdmitAt admits every call: the account limits retries, not calls. With
// RetryAt and RecordAt it makes an Account a retry budget (the recoil.Budget
// interface), so a call can spend from it as its request budget.
func (a *Account) AdmitAt(time.Time) bool { return true }

// RetryAt spends one retry, as TrySpend does.
func (a *Account) RetryAt(time.Time, budget.Cause) bool { return a.TrySpend() }

// RecordAt does nothing: outcomes do not refill a request's budget.
func (a *Account) RecordAt(time.Time, budget.Outcome) {}

// EdgeBudget is the retry budget a caller gives a call tree it starts —
// an edge, whose request carried no budget (its context has no Account):
// configured when it is not zero (a negative one means zero), and
// otherwise the retries the caller's own policy allows (for a
// recoil.Policy, MaxAttempts-1, with its default of 3 attempts when
// MaxAttempts is zero), so that sending the budget never limits what the
// policy allows. The HTTP Transport's and the gRPC Client's EdgeBudget
// fields mean this.
func EdgeBudget(configured, policyRetries int) int {
	if configured != 0 {
		return max(configured, 0)
	}
	return max(policyRetries, 0)
}
