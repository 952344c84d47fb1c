// Package fleet shares one rate allowance and one retry budget among every
// process of a fleet, through Redis.
//
// A model provider meters the organisation, not the process: every service
// and every replica draws on one allowance of requests (and tokens) per
// minute, and the attempts it rejects count against it. A retry budget kept
// per process bounds nothing once an autoscaler multiplies the processes
// (docs/why.md, sections 1 and 4). This package keeps both in Redis:
//
//   - [Allowance]: a token bucket (GCRA) of Limit per Window, updated
//     atomically by Lua on the Redis clock, that callers consult before
//     each attempt. It learns the real limit from OpenAI's x-ratelimit-*
//     and Anthropic's anthropic-ratelimit-* headers ([Allowance.Learn],
//     [Learner]), paces the fleet before the provider's 429 when its
//     headers say little remains, and can keep a share for interactive
//     callers. A Tokens allowance counts tokens.
//   - [Budget]: package budget's Share (recoil's default retry budget, and
//     the default here), TokenBucket (gRFC A6) or Ratio (Finagle) with its
//     state in Redis, implementing recoil.Budget.
//   - [Guard]: an allowance and a retry budget as one recoil.CostBudget,
//     for Policy.Budget, so every attempt of every call is charged — by its
//     tokens for a Tokens allowance (recoil.WithCost, or the estimate
//     recoilhttp.Transport makes), settled by the usage the response
//     reports — and a recoil.Refunder, so a retry a later budget refuses
//     gets its charge back from both.
//
// Each process takes a slice of the allowance or budget at a time (a lease)
// with one round trip and decides locally from it; the overshoot this
// allows is bounded and documented on [Allowance] and [Budget]. Every Redis
// call is bounded by [Config].Timeout (50 ms by default); when Redis is slow
// or gone, the decision that found out is made from the local share —
// 1/Replicas of each limit — and so are the ones after it, without contacting
// Redis, until one probe goroutine finds Redis again. Every key written
// starts with [Config].Prefix, names its allowance or budget in a hash tag,
// and has a TTL.
//
// # Usage
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
//	fl, err := fleet.New(fleet.Config{Redis: rdb, Replicas: 8})
//	defer fl.Close() // returns unused leases, stops the probe
//
//	allowance, err := fl.Allowance(fleet.AllowanceConfig{Name: "org-42/openai", Limit: 10_000, Reserved: 0.2})
//	retries, err := fl.Budget(fleet.BudgetConfig{Name: "org-42/openai"})
//	policy := &recoil.Policy{Budget: allowance.Guard(fleet.Interactive, retries)}
//	client := &http.Client{Transport: &recoilhttp.Transport{
//		Policy: policy,
//		Base:   &fleet.Learner{Allowances: []*fleet.Allowance{allowance}},
//	}}
//
// docs/fleet.md tells the design, the bounds and what was measured.
package fleet
