package fleet

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/recoilhttp"
)

var errFlaky = errors.New("flaky")

// As a Policy's Budget, a Guard charges every attempt, retries included, to
// the allowance, and refuses a call's first attempt once it is spent.
func TestGuardInPolicy(t *testing.T) {
	tests := []struct {
		name     string
		shared   bool
		failures int // per call, before it succeeds
		calls    int // that go before the allowance of 6 refuses one
	}{
		{"local, no retries", false, 0, 6},
		{"local, one retry each", false, 1, 3},
		{"redis, two retries each", true, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := localClient(t, 1)
			if tt.shared {
				c = replicasOne(t)
			}
			a := mustAllowance(t, c, AllowanceConfig{Name: "org", Limit: 6, Window: time.Hour, Lease: 1})
			p := &recoil.Policy{MaxAttempts: 5, Backoff: backoff.None{}, Budget: a.Guard(Interactive, &budget.TokenBucket{})}
			for i := range tt.calls + 1 {
				left := tt.failures
				err := recoil.Do(context.Background(), p, func(context.Context) error {
					if left > 0 {
						left--
						return errFlaky
					}
					return nil
				})
				switch {
				case i < tt.calls && err != nil:
					t.Fatalf("call %d: %v, want success", i+1, err)
				case i == tt.calls && !errors.Is(err, recoil.ErrBudget):
					t.Fatalf("call %d: %v, want ErrBudget: the allowance is spent", i+1, err)
				}
			}
		})
	}
}

func replicasOne(t *testing.T) *Client {
	cs, _ := replicas(t, 1, Config{})
	return cs[0]
}

// A Learner under the HTTP Transport teaches the allowance from each
// attempt's response, a 429 included.
func TestLearnerUnderTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("anthropic-ratelimit-requests-limit", "50")
		w.Header().Set("anthropic-ratelimit-requests-remaining", "0")
		w.Header().Set("anthropic-ratelimit-requests-reset", time.Now().Add(time.Minute).UTC().Format(time.RFC3339))
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	c := replicasOne(t)
	a := mustAllowance(t, c, AllowanceConfig{Name: "org", Limit: 1000, Lease: 1})
	client := &http.Client{Transport: &recoilhttp.Transport{
		Base:   &Learner{Allowances: []*Allowance{a}},
		Policy: &recoil.Policy{MaxAttempts: 1},
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := a.Limit(); got != 50 {
		t.Errorf("Limit() = %d after the response, want the learned 50", got)
	}
	if a.Allow(Interactive) {
		t.Errorf("allowed a request after the provider said none remain for a minute")
	}
}

// countingBudget is a recoil.Budget that is neither a recoil.Refunder nor
// a recoil.CostBudget: it counts what it is asked, and grants everything.
type countingBudget struct{ admits, retries, records int }

func (b *countingBudget) AdmitAt(time.Time) bool               { b.admits++; return true }
func (b *countingBudget) RetryAt(time.Time, budget.Cause) bool { b.retries++; return true }
func (b *countingBudget) RecordAt(time.Time, budget.Outcome)   { b.records++ }

// refundingBudget is a countingBudget that is a recoil.Refunder: it keeps
// the n of every refund.
type refundingBudget struct {
	countingBudget
	refunds []int64
}

func (b *refundingBudget) RefundAt(_ time.Time, _ budget.Cause, n int64) {
	b.refunds = append(b.refunds, n)
}

// costBudget is a countingBudget that is a recoil.CostBudget and not a
// recoil.Refunder: it keeps every settlement.
type costBudget struct {
	countingBudget
	settles [][2]int64
}

func (b *costBudget) AdmitNAt(time.Time, int64) bool { b.admits++; return true }
func (b *costBudget) RetryNAt(time.Time, budget.Cause, int64) bool {
	b.retries++
	return true
}
func (b *costBudget) SettleAt(_ time.Time, charged, actual int64) {
	b.settles = append(b.settles, [2]int64{charged, actual})
}

// costRefundingBudget is a recoil.CostBudget and a recoil.Refunder.
type costRefundingBudget struct {
	costBudget
	refunds []int64
}

func (b *costRefundingBudget) RefundAt(_ time.Time, _ budget.Cause, n int64) {
	b.refunds = append(b.refunds, n)
}

// unitsLeft counts the units a grants Interactive at now before it refuses.
func unitsLeft(a *Allowance, now time.Time) int {
	left := 0
	for left < 1000 && a.AllowNAt(now, Interactive, 1) {
		left++
	}
	return left
}

// spentShare is a budget.Share with three retries spent, so that a refund
// has room to land.
func spentShare() *budget.Share {
	s := new(budget.Share)
	for range 3 {
		s.RetryAt(t0, budget.CauseError)
	}
	return s
}

// A retry a Guard granted and then refunded (recoil.Refunder) gives its
// units back to the allowance and its charge back to the retry budget: to
// a Refunder as a refund (the cost too, when it was charged by cost), to a
// CostBudget that is not one as a settlement to nothing. A budget that is
// neither is asked for nothing more than the retry.
func TestGuardRefund(t *testing.T) {
	tests := []struct {
		name    string
		unit    Unit
		cost    int64 // 0: RetryAt, else RetryNAt with it
		retries func() recoil.Budget
		check   func(t *testing.T, b recoil.Budget)
	}{
		{"a Refunder gets the refund", Requests, 0, func() recoil.Budget { return new(refundingBudget) },
			func(t *testing.T, b recoil.Budget) {
				r := b.(*refundingBudget)
				if !slices.Equal(r.refunds, []int64{0}) || r.retries != 1 {
					t.Errorf("refunds %v after %d retries, want [0] after 1", r.refunds, r.retries)
				}
			}},
		{"a Refunder charged with RetryAt is refunded one retry", Tokens, 7, func() recoil.Budget { return new(refundingBudget) },
			func(t *testing.T, b recoil.Budget) {
				if r := b.(*refundingBudget); !slices.Equal(r.refunds, []int64{0}) {
					t.Errorf("refunds %v, want [0]: it was asked with RetryAt, not for 7", r.refunds)
				}
			}},
		{"a costed Refunder is refunded the cost", Tokens, 7, func() recoil.Budget { return new(costRefundingBudget) },
			func(t *testing.T, b recoil.Budget) {
				r := b.(*costRefundingBudget)
				if !slices.Equal(r.refunds, []int64{7}) || len(r.settles) != 0 {
					t.Errorf("refunds %v, settles %v, want [7] and none", r.refunds, r.settles)
				}
			}},
		{"a CostBudget that is no Refunder is settled to nothing", Tokens, 7, func() recoil.Budget { return new(costBudget) },
			func(t *testing.T, b recoil.Budget) {
				if s := b.(*costBudget).settles; !slices.Equal(s, [][2]int64{{7, 0}}) {
					t.Errorf("settles %v, want [[7 0]]", s)
				}
			}},
		{"a budget that is neither is asked nothing more", Requests, 0, func() recoil.Budget { return new(countingBudget) },
			func(t *testing.T, b recoil.Budget) {
				if c := *b.(*countingBudget); c != (countingBudget{retries: 1}) {
					t.Errorf("asked %+v, want the one retry only", c)
				}
			}},
		{"package budget's Share gets its retry back", Requests, 0, func() recoil.Budget { return spentShare() },
			func(t *testing.T, b recoil.Budget) {
				// Three spent before, one spent and refunded: the balance is
				// what three spent leave.
				if got, w := b.(*budget.Share).State().Retries, spentShare().State().Retries; got != w {
					t.Errorf("share holds %v retries, want %v", got, w)
				}
			}},
		{"no retry budget", Requests, 0, func() recoil.Budget { return nil }, func(*testing.T, recoil.Budget) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := AllowanceConfig{Name: "org", Unit: tt.unit, Limit: 50, Window: time.Hour, Lease: 1}
			a := mustAllowance(t, localClient(t, 1), cfg)
			untouched := mustAllowance(t, localClient(t, 1), cfg)
			b := tt.retries()
			g := a.Guard(Interactive, b)
			var ok bool
			if tt.cost == 0 {
				ok = g.RetryAt(t0, budget.CauseError)
			} else {
				ok = g.RetryNAt(t0, budget.CauseError, tt.cost)
			}
			if !ok {
				t.Fatal("the guard refused the retry")
			}
			g.RefundAt(t0, budget.CauseError, tt.cost)
			if got, want := unitsLeft(a, t0), unitsLeft(untouched, t0); got != want {
				t.Errorf("%d units left after the refund, want %d: the refunded charge is lost", got, want)
			}
			tt.check(t, b)
		})
	}
}

// The engine refunds a retry the policy's budget paid for when the
// request's hop account then refuses it; with a Guard as the policy's
// budget, as recoil proxy sets one, the refund reaches the allowance and a
// retry budget that is a recoil.Refunder.
func TestGuardRefundedByEngine(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	tests := []struct {
		name    string
		retries recoil.Budget
		refunds []int64 // what a Refunder is given
	}{
		{"a Refunder", new(refundingBudget), []int64{0}},
		{"a budget that is not one", new(countingBudget), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustAllowance(t, localClient(t, 1), AllowanceConfig{Name: "org", Limit: 50, Window: time.Hour, Lease: 1})
			client := &http.Client{Transport: &recoilhttp.Transport{
				Policy: &recoil.Policy{MaxAttempts: 3, Backoff: backoff.None{}, Budget: a.Guard(Interactive, tt.retries)},
			}}
			// The request's hop account has no retries left: the first
			// retry is paid by the Guard, then refused by the account.
			ctx := hop.WithAccount(context.Background(), hop.NewAccount(0))
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			var retried int
			switch b := tt.retries.(type) {
			case *refundingBudget:
				retried = b.retries
				if !slices.Equal(b.refunds, tt.refunds) {
					t.Errorf("refunds %v, want %v", b.refunds, tt.refunds)
				}
			case *countingBudget:
				retried = b.retries
			}
			if retried != 1 {
				t.Fatalf("the retry budget was asked for %d retries, want 1 (the one refused after)", retried)
			}
			// 50 less the first attempt's unit: the retry's came back.
			if got := unitsLeft(a, time.Now()); got != 49 {
				t.Errorf("%d units left, want 49: the refused retry's unit was not refunded", got)
			}
		})
	}
}
