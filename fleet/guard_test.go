package fleet

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/budget"
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
