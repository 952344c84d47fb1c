// Package policyspec is recoil's one policy language: how a retry policy is
// written down — in a scenario for the simulator (package sim), in a policy
// file for the load driver (package load), in the presets — and how what
// is written becomes a recoil.Policy. A Spec is a description: Build and
// Policy make a fresh recoil.Policy from it each time, with its own
// budget, breaker and limiter state.
//
// # Usage
//
//	s, err := policyspec.Load("careful.yaml") // or Parse(name, data), or Preset("full-jitter")
//	if err != nil {
//		return err // an *Error: file, line and field
//	}
//	p := s.Policy(nil) // a *recoil.Policy, for recoil.Do or a recoilhttp.Transport
//
// # The language
//
// A policy is a YAML mapping. Every field may be left out: a field not
// written is the zero recoil.Policy field, which means recoil's documented
// default, so an empty mapping is recoil's default policy. The names are
// recoil.Policy's own, in snake case; durations are Go durations
// ("200ms", "1m30s"); a number may end in % ("5%" is 0.05).
//
//	name: careful                # the name in reports
//	preset: full-jitter          # start from a preset; what follows replaces its fields
//	max_attempts: 6              # the first attempt included; 0 means 3, 1 means no retries
//	backoff: {kind: full-jitter, base: 100ms, max: 5s, multiplier: 2}   # or: backoff: none
//	overload_backoff: {kind: full-jitter, base: 1s, max: 20s}           # after a 503, 529 or 429 without Retry-After
//	max_server_wait: 60s         # the longest Retry-After honoured
//	min_attempt: 10ms            # no wait starts unless it and this fit before the deadline
//	timeout: 10s                 # the whole call, waits included
//	attempt_timeout: 2s          # each attempt
//	budget: {kind: share, percent: 20%, reserve: 10}    # or none, default, {kind: token-bucket, …}
//	breaker: {failure_rate: 80%, min_requests: 50, open: 1s}            # or none, default
//	limit: 24                    # attempts in flight at once; 0 means no cap
//	limiter: {kind: adaptive, min: 2, max: 200}  # or {capacity: 24, max_queue: 48, max_wait: 2s}; instead of limit
//	priority: background         # or interactive (the default): for a limiter that orders by priority
//	classify: default            # or retry-everything, timeouts
//	hop: 2                       # the hop protocol's retries for the whole call tree
//	idle_timeout: 15s            # HTTP only: a body that delivers nothing this long fails
//	fallback:                    # ordered targets, each an upstream (in a scenario, a service)
//	  targets:
//	    - primary                                       # shorthand for {name: primary}
//	    - {name: second-key, upstream: provider-b, breaker: {consecutive_failures: 3, open: 30s}}
//	    - {name: self-hosted, max_context: 32000}
//	  cooldown: 15s              # how long an overloaded or rate-limited target is passed over
//	  retries: shared            # or per-target: the gateways' nested loops (the simulator only)
//	hedge: {quantile: 0.95, delay: 300ms, max_hedges: 1}  # race the slow tail with a copy
//
// Backoff kinds: none; constant (base); exponential, full-jitter and
// equal-jitter (base, max, multiplier); decorrelated (base, max);
// proportional (base, max, multiplier, jitter). Budget kinds: none;
// default; share (percent, reserve); token-bucket (max_tokens,
// token_ratio); ratio (percent, ttl,
// min_retries_per_sec); quota (capacity, retry_cost, timeout_cost,
// throttle_cost, no_retry_increment); adaptive (k, window). A budget
// mapping without a kind is a token bucket. Breaker settings:
// consecutive_failures, open, failure_rate, window, min_requests,
// max_probes, success_threshold. Limiter kinds: fixed (capacity,
// max_queue, max_wait), the kind of a mapping without one; adaptive
// (initial, min, max, max_queue, max_wait, window, window_samples,
// long_window, warmup, tolerance, smoothing, decrease, reserve).
//
// overload_backoff left out is recoil's own (full jitter from 1 s), not
// the backoff written above it: to use one schedule for both, write it
// once with an anchor (backoff: &b {…}) and overload_backoff: *b.
//
// The repository's docs/policy-language.md has every field with its type,
// default and an example. Field names and values from before the one
// language (attempts, kind: full, cap, failures, tokens, ratio,
// retry_everything, classify: classify) are errors that name the new
// spelling.
package policyspec
