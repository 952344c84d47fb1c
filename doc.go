// Package recoil calls dependencies that fail — model APIs above all —
// without letting the retries become the outage.
//
// A retry wrapper that retries "anything that is not a 2xx" turns a validator's
// 400, which fails correctly in a fifth of a second, into five attempts and
// fifteen seconds of a worker held asleep, and spends the organisation's
// shared request allowance on answers that will never change. recoil retries
// the way the seeds of this project ask:
//
//   - classify before retrying: a Verdict says whether a failure is
//     permanent, transient, throttled or overloaded, and why;
//   - back off with full jitter, honour Retry-After and never shorten it;
//   - respect the caller's deadline: no wait starts that cannot finish;
//   - let a retry budget, a circuit breaker and a concurrency limit refuse
//     retries when the dependency is the thing that needs protecting;
//   - say what happened once: one *Error and one Summary per logical call.
//
// # Usage
//
//	err := recoil.Do(ctx, nil, func(ctx context.Context) error {
//		return callTheModel(ctx)
//	})
//
// A nil *Policy means Default, which is the zero Policy: built-in
// classification, 3 attempts, full jitter from 100 ms to 20 s, Retry-After
// honoured up to 60 s, deadline-aware. Mark errors to classify them at the
// source (Permanent, RetryAfter, Overloaded, Transient) or give the policy a
// Classifier.
//
// # One decision
//
// Policy.Decide is the one place recoil decides whether to retry and how long
// to wait. It reads no clock: time and randomness are arguments, so the
// simulator runs the same code on virtual time. Call carries one logical
// call's state through Decide, the budget and the breaker; Do and Get drive a
// Call on real time, and anything else (an HTTP transport, a simulator) can
// drive one on its own clock.
package recoil
