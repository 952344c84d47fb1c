// Package recoil calls dependencies that fail — model APIs above all —
// without letting the retries become the outage.
//
// A retry wrapper that retries "anything that is not a 2xx" turns a validator's
// 400, which fails correctly in a fifth of a second, into five attempts and
// fifteen seconds of a worker held asleep, and spends the organisation's
// shared request allowance on answers that will never change. recoil retries
// the careful way:
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
// A nil *Policy means Default(), which is a zero Policy: built-in
// classification, 3 attempts, full jitter from 100 ms to 20 s, Retry-After
// honoured up to 60 s, deadline-aware, with a retry budget of its own. No
// breaker, concurrency cap or whole-call time bound is on by default: each
// belongs to one dependency. Mark errors to classify them at the source
// (Permanent, RetryAfter, Overloaded, Transient), return errors that report
// an HTTP status (a StatusCode() int method), or give the policy a
// Classifier.
//
// # One decision, one loop
//
// Policy.Decide is the one place recoil decides whether to retry and how long
// to wait. It reads no clock: time and randomness are arguments, so the
// simulator runs the same code on virtual time.
//
// Around it there is one retry loop: admission, a limiter slot per
// attempt, the attempt's and the call's deadlines, classification, the
// budgets, the breaker, waits and observers. Each attempt holds one permit
// for what it took (a slot, the breakers' probes, its target's allowance,
// the budgets' charges, its start and its target), which its outcome
// settles or, for an attempt refused part-way, which gives all of it back.
// Drive runs the loop on real time for any Driver — Do and Get, the HTTP
// Transport in package recoilhttp and the gRPC interceptors are drivers —
// hedged or not: a hedge only runs beside the caller's attempt; a driver
// on a clock of its own (the simulator) steps the same state machine, Call. Every Policy field means
// the same thing in every driver. The boundary runs one way: a driver
// classifies each attempt once (Driver.Verdict, through Policy.Verdict),
// hands the loop its request's budget (RequestBudgeter), and the loop
// imports no driver's package.
package recoil
