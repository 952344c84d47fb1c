package fleet

import (
	"net/http"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/budget"
)

// Guard returns a recoil.Budget that charges every attempt of a call to the
// allowance, as class c, and then asks retries (a retry budget: a fleet
// Budget, or one of package budget's) — so Policy.Budget = a.Guard(…) holds
// a policy's first attempts and retries to the shared allowance. Nil retries
// means no retry budget beyond the allowance. A unit charged for an attempt
// the retry budget then refuses is put back into the process's lease.
//
// The Guard is a recoil.CostBudget: for a Tokens allowance, an attempt whose
// call carries a cost (recoil.WithCost, or recoilhttp.Transport's estimate)
// is charged that many tokens, and SettleAt corrects the charge by what
// the response reports; a Requests allowance charges one unit whatever the
// cost. The cost is passed on to retries when it is a CostBudget too, so
// Guards chain: tokens.Guard(c, requests.Guard(c, retries)) holds each
// attempt to a provider's tokens and requests meters both.
func (a *Allowance) Guard(c Class, retries recoil.Budget) *Guard {
	g := &Guard{a: a, class: c, retries: retries}
	g.costly, _ = retries.(recoil.CostBudget)
	return g
}

// Guard is an Allowance and a retry budget as one recoil.CostBudget: AdmitAt
// and RetryAt each charge the allowance one unit before asking the retry
// budget, AdmitNAt and RetryNAt the attempt's cost for a Tokens allowance.
// It is a recoil.Refunder too: a retry it granted that a later budget
// refused gets its charge back, from the allowance and the retry budget.
// The zero Guard is not usable; make one with Allowance.Guard. A Guard is
// safe for concurrent use.
type Guard struct {
	a       *Allowance
	class   Class
	retries recoil.Budget
	costly  recoil.CostBudget // retries, when it charges by cost
}

var (
	_ recoil.CostBudget = (*Guard)(nil)
	_ recoil.Refunder   = (*Guard)(nil)
)

// units is what an attempt that costs n charges the allowance.
func (g *Guard) units(n int64) int64 {
	if g.a.cfg.Unit == Tokens {
		return n
	}
	return 1
}

// AdmitAt charges the call's first attempt one unit to the allowance and
// asks the retry budget to admit it.
func (g *Guard) AdmitAt(now time.Time) bool { return g.admit(now, 1, false) }

// AdmitNAt charges the call's first attempt, which costs n, to the
// allowance (n units for a Tokens allowance, one for a Requests one) and
// asks the retry budget to admit it, with the cost when it is a
// recoil.CostBudget.
func (g *Guard) AdmitNAt(now time.Time, n int64) bool { return g.admit(now, n, true) }

func (g *Guard) admit(now time.Time, n int64, costed bool) bool {
	u := g.units(n)
	if !g.a.AllowNAt(now, g.class, u) {
		return false
	}
	var ok bool
	switch {
	case g.retries == nil:
		return true
	case costed && g.costly != nil:
		ok = g.costly.AdmitNAt(now, n)
	default:
		ok = g.retries.AdmitAt(now)
	}
	if !ok {
		g.a.putBack(now, g.class, u)
	}
	return ok
}

// RetryAt charges a retry one unit to the allowance and asks the retry
// budget.
func (g *Guard) RetryAt(now time.Time, c budget.Cause) bool { return g.retry(now, c, 1, false) }

// RetryNAt charges a retry that costs n as AdmitNAt charges a first
// attempt, and asks the retry budget.
func (g *Guard) RetryNAt(now time.Time, c budget.Cause, n int64) bool {
	return g.retry(now, c, n, true)
}

func (g *Guard) retry(now time.Time, c budget.Cause, n int64, costed bool) bool {
	u := g.units(n)
	if !g.a.AllowNAt(now, g.class, u) {
		return false
	}
	var ok bool
	switch {
	case g.retries == nil:
		return true
	case costed && g.costly != nil:
		ok = g.costly.RetryNAt(now, c, n)
	default:
		ok = g.retries.RetryAt(now, c)
	}
	if !ok {
		g.a.putBack(now, g.class, u)
	}
	return ok
}

// SettleAt corrects an attempt's charge by what it cost (see
// Allowance.SettleAt) for a Tokens allowance, and passes the correction on
// to the retry budget when it is a recoil.CostBudget.
func (g *Guard) SettleAt(now time.Time, charged, actual int64) {
	if g.a.cfg.Unit == Tokens {
		g.a.SettleAt(now, g.class, charged, actual)
	}
	if g.costly != nil {
		g.costly.SettleAt(now, charged, actual)
	}
}

// RefundAt gives back what RetryAt (n 0) or RetryNAt (n ≥ 1) charged for a
// retry priced at c that then did not go — the engine refunds it when a
// later budget, the request's hop account, refuses the retry
// (recoil.Refunder). The allowance's units go back into the process's
// lease, as when the retry budget itself refuses; the retry budget gets
// its charge back when it can give one: a recoil.Refunder is refunded
// (with the cost when it was charged by cost), a recoil.CostBudget that
// is not one is settled to nothing, as the engine itself refunds one, and
// any other budget keeps what it charged.
func (g *Guard) RefundAt(now time.Time, c budget.Cause, n int64) {
	g.a.putBack(now, g.class, g.units(max(n, 1)))
	if n > 0 && g.costly == nil {
		n = 0 // the retry budget was asked with RetryAt: one retry
	}
	switch r := g.retries.(type) {
	case recoil.Refunder:
		r.RefundAt(now, c, n)
	case recoil.CostBudget:
		r.SettleAt(now, max(n, 1), 0)
	}
}

// RecordAt passes the outcome to the retry budget.
func (g *Guard) RecordAt(now time.Time, o budget.Outcome) {
	if g.retries != nil {
		g.retries.RecordAt(now, o)
	}
}

// Learner is an http.RoundTripper that feeds every response's headers to
// its allowances (Allowance.Learn) before returning it. Put it under a
// recoilhttp.Transport, as its Base, so that every attempt's response
// teaches the fleet, 429s included. Each allowance learns the meter of its
// Unit: give it one of each to learn a provider's requests and tokens
// limits from the same responses, and to pace on either.
//
// The zero Learner sends through http.DefaultTransport and learns nothing.
// A Learner is safe for concurrent use; do not change its fields after first
// use.
type Learner struct {
	// Base sends the request; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Allowances learn from each response.
	Allowances []*Allowance
}

// RoundTrip sends req through Base and feeds the response's headers to the
// allowances; it returns what Base returned, unchanged. Malformed headers
// are ignored.
func (l *Learner) RoundTrip(req *http.Request) (*http.Response, error) {
	base := l.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if resp != nil {
		now := time.Now()
		for _, a := range l.Allowances {
			_ = a.Learn(resp.Header, now) // a malformed header teaches nothing
		}
	}
	return resp, err
}
