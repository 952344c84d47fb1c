package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/fleet"
	"github.com/recoil-go/recoil/recoilhttp"
)

// A Client shares allowances and budgets through Redis. In production its
// Config names a Redis client:
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
//	c, err := fleet.New(fleet.Config{Redis: rdb, Replicas: 8})
//
// The examples leave Redis out, so they run anywhere: every decision is then
// made from the local share, 1/Replicas of each limit — what a process does
// while Redis is away.
func ExampleNew() {
	c, err := fleet.New(fleet.Config{Replicas: 4}) // no Redis: local shares only
	if err != nil {
		panic(err)
	}
	defer c.Close() // returns unused leases, stops the reconnect probe
	fmt.Println("using Redis:", c.Shared())
	// Output:
	// using Redis: false
}

// An allowance of 600 requests a minute over 4 replicas, with a fifth kept
// for interactive callers: while Redis is away, this process may send 150 a
// minute, of which background work may take 120.
func ExampleClient_Allowance() {
	c, _ := fleet.New(fleet.Config{Replicas: 4})
	defer c.Close()
	a, err := c.Allowance(fleet.AllowanceConfig{Name: "org-42/openai", Limit: 600, Reserved: 0.2})
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	count := func(class fleet.Class) (n int) {
		for a.AllowAt(now, class) {
			n++
		}
		return n
	}
	fmt.Println("background:", count(fleet.Background))
	fmt.Println("interactive, after it:", count(fleet.Interactive))
	// Output:
	// background: 120
	// interactive, after it: 30
}

// A Guard is an allowance and a retry budget as a Policy's Budget: every
// attempt, retries included, is charged to the allowance.
func ExampleAllowance_Guard() {
	c, _ := fleet.New(fleet.Config{})
	defer c.Close()
	a, _ := c.Allowance(fleet.AllowanceConfig{Name: "org-42/anthropic", Limit: 4, Window: time.Hour})
	p := &recoil.Policy{Backoff: backoff.None{}, Budget: a.Guard(fleet.Interactive, &budget.TokenBucket{})}

	fails := 1
	for i := 1; i <= 4; i++ {
		err := recoil.Do(context.Background(), p, func(context.Context) error {
			if fails > 0 {
				fails--
				return errors.New("503")
			}
			return nil
		})
		fmt.Printf("call %d: %v\n", i, err)
	}
	// Output:
	// call 1: <nil>
	// call 2: <nil>
	// call 3: <nil>
	// call 4: recoil: retry budget exhausted after 0 attempts
}

// Learn reads a response's rate-limit headers: the provider's limit
// replaces the configured one for every process, and what it says remains
// caps the shared bucket. Put a Learner under a recoilhttp.Transport to feed
// it every response.
func ExampleAllowance_Learn() {
	c, _ := fleet.New(fleet.Config{})
	defer c.Close()
	a, _ := c.Allowance(fleet.AllowanceConfig{Name: "org-42/openai", Limit: 1000})

	h := http.Header{}
	h.Set("x-ratelimit-limit-requests", "500")
	h.Set("x-ratelimit-remaining-requests", "499")
	h.Set("x-ratelimit-reset-requests", "120ms")
	if err := a.Learn(h, time.Time{}); err != nil {
		panic(err)
	}
	fmt.Println("limit:", a.Limit())
	// Output:
	// limit: 500
}

// A shared retry budget with the default semantics, package budget's
// Share, for Policy.Budget. Here without Redis, each of 2 replicas keeps
// half the reserve of 10 retries, and every five successes pay for one more.
func ExampleClient_Budget() {
	c, _ := fleet.New(fleet.Config{Replicas: 2})
	defer c.Close()
	b, err := c.Budget(fleet.BudgetConfig{Name: "org-42/openai"})
	if err != nil {
		panic(err)
	}
	_ = &recoil.Policy{Budget: b}

	retries := func() (n int) {
		for b.RetryAt(time.Time{}, budget.CauseError) {
			b.RecordAt(time.Time{}, budget.Outcome{Attempt: 2, Result: budget.Failure})
			n++
		}
		return n
	}
	fmt.Println("retries before the budget refused:", retries())
	for range 5 {
		b.RecordAt(time.Time{}, budget.Outcome{Attempt: 1, Result: budget.Success})
	}
	fmt.Println("after five successes:", retries())
	// Output:
	// retries before the budget refused: 5
	// after five successes: 1
}

// A shared retry budget with gRFC A6's semantics, asked for explicitly.
// Here without Redis, each of 2 replicas keeps half the bucket's 20
// tokens, and retries stop at half of that.
func ExampleClient_Budget_tokenBucket() {
	c, _ := fleet.New(fleet.Config{Replicas: 2})
	defer c.Close()
	b, err := c.Budget(fleet.BudgetConfig{Name: "org-42/openai", TokenBucket: &budget.TokenBucketConfig{MaxTokens: 20}})
	if err != nil {
		panic(err)
	}

	failures := 0
	for b.RetryAt(time.Time{}, budget.CauseError) {
		b.RecordAt(time.Time{}, budget.Outcome{Attempt: 1, Result: budget.Failure})
		failures++
	}
	fmt.Println("retries allowed before the budget refused:", failures)
	// Output:
	// retries allowed before the budget refused: 5
}

// ParseHeader reads OpenAI's and Anthropic's rate-limit headers.
func ExampleParseHeader() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("anthropic-ratelimit-requests-limit", "50")
	h.Set("anthropic-ratelimit-requests-remaining", "49")
	h.Set("anthropic-ratelimit-requests-reset", "2026-03-01T12:00:01Z")
	h.Set("x-ratelimit-reset-tokens", "six minutes")
	l, err := fleet.ParseHeader(h, now)
	fmt.Printf("requests: limit %d, remaining %d, whole in %v\n", l.Requests.Limit, l.Requests.Remaining, l.Requests.Reset)
	fmt.Println(err)
	// Output:
	// requests: limit 50, remaining 49, whole in 1s
	// fleet: malformed rate-limit header: X-Ratelimit-Reset-Tokens: "six minutes" is not a non-negative duration such as 6m0s or 20ms
}

// A Learner under the HTTP Transport feeds every attempt's response to the
// allowance, 429s included, so the fleet slows down before the provider
// refuses it.
func ExampleLearner() {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-ratelimit-limit-requests", "3000")
		w.Header().Set("x-ratelimit-remaining-requests", "2999")
		w.Header().Set("x-ratelimit-reset-requests", "20ms")
	}))
	defer provider.Close()

	c, _ := fleet.New(fleet.Config{})
	defer c.Close()
	a, _ := c.Allowance(fleet.AllowanceConfig{Name: "org-42/openai", Limit: 500})
	client := &http.Client{Transport: &recoilhttp.Transport{
		Policy: &recoil.Policy{Budget: a.Guard(fleet.Interactive, nil)},
		Base:   &fleet.Learner{Allowances: []*fleet.Allowance{a}},
	}}
	resp, err := client.Get(provider.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("status:", resp.StatusCode, "limit learned:", a.Limit())
	// Output:
	// status: 200 limit learned: 3000
}

// Fallbacks counts the Redis calls whose decision fell back to the local
// share. Here nothing listens where the Redis client points, so the first
// decision's call goes unanswered, is counted as unreachable and marks
// Redis down; the decisions after it are local without a call, until the
// probe finds Redis again. To export the counts, pass the Client to
// recoilprom's or recoilotel's Metrics.Fleet:
//
//	m.Fleet("main", c) // recoil_fleet_fallbacks_total{fleet="main",cause="unreachable"|"refused"}
func ExampleClient_Fallbacks() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1})
	defer rdb.Close()
	c, _ := fleet.New(fleet.Config{Redis: rdb, Timeout: 100 * time.Millisecond})
	defer c.Close()
	a, _ := c.Allowance(fleet.AllowanceConfig{Name: "org-42/openai", Limit: 600})
	for range 3 {
		a.Allow(fleet.Interactive)
	}
	unreachable, refused := c.Fallbacks()
	fmt.Println("unreachable:", unreachable, "refused:", refused, "using Redis:", c.Shared())
	// Output:
	// unreachable: 1 refused: 0 using Redis: false
}

// A provider that meters tokens and requests: one allowance of each, the
// tokens Guard chained over the requests one, both fed by one Learner. A
// call carries its cost (recoil.WithCost, or the estimate recoilhttp's
// Transport makes from the request): the tokens allowance is charged that,
// the requests allowance one. When a response says 12,000 of 90,000 tokens
// remain with the reset 20 s away, the fleet paces: 1,500-token requests
// tried every 100 ms go one every 2.5 s, eight in the 20 s — where the
// bucket alone, which does not know what the provider has left, lets 79
// go and the provider answers most of them with a 429.
func ExampleAllowance_tokens() {
	c, _ := fleet.New(fleet.Config{}) // no Redis here: the local share, of one replica
	defer c.Close()
	guard := func(name string) (*fleet.Allowance, *fleet.Guard) {
		tpm, _ := c.Allowance(fleet.AllowanceConfig{Name: name + "/tokens", Unit: fleet.Tokens, Limit: 90_000})
		rpm, _ := c.Allowance(fleet.AllowanceConfig{Name: name, Limit: 500})
		// As a Transport's Policy.Budget, with Base: &fleet.Learner{Allowances: []*fleet.Allowance{tpm, rpm}}.
		return tpm, tpm.Guard(fleet.Interactive, rpm.Guard(fleet.Interactive, nil))
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(g *fleet.Guard) (went []time.Duration) {
		for at := time.Duration(0); at < 20*time.Second; at += 100 * time.Millisecond {
			if g.AdmitNAt(now.Add(at), 1500) { // what the loop asks before an attempt that costs 1,500
				went = append(went, at)
			}
		}
		return went
	}

	tpm, paced := guard("org-42/openai")
	h := http.Header{}
	h.Set("x-ratelimit-limit-tokens", "90000")
	h.Set("x-ratelimit-remaining-tokens", "12000")
	h.Set("x-ratelimit-reset-tokens", "20s")
	tpm.Learn(h, now) // what the Learner does with every response
	went := run(paced)
	fmt.Println("paced:", len(went), "went, at", went[:3], "…")

	_, unpaced := guard("org-42/other")
	fmt.Println("the bucket alone:", len(run(unpaced)), "went")
	// Output:
	// paced: 8 went, at [0s 2.5s 5s] …
	// the bucket alone: 79 went
}
