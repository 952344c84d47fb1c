// Package load drives an HTTP endpoint with callers whose every logical
// request goes through a retrying recoilhttp.Transport, and counts what
// they sent: attempts, the peak within any window, calls that got through,
// how long until all had, and latency percentiles.
//
// It runs callers against a failing dependency on real sockets — a 700 ms
// payment-gateway outage, say — with any number of callers up to
// MaxCallers (closed loop) or an arrival rate up to MaxRate (open loop),
// any policy — the presets immediate, wrapper, exponential, full-jitter and
// default, or a policy file in the policy language the simulator's
// scenarios share (package policyspec) — and a real HTTP server on the
// other side, usually package gateway, which counts the same attempts as
// they arrive. When attempts get no response the Result says why, by kind
// (connection refused, DNS lookup failed, TLS error, timeout, …) with the
// first error's message; Result.Diagnosis says it in words.
//
// # Usage
//
//	p, _ := load.Preset(load.PresetFullJitter)
//	res, err := load.Run(ctx, load.Config{
//		URL:           "http://127.0.0.1:8080/v1/messages",
//		Body:          []byte(`{"model":"m","max_tokens":1,"messages":[]}`),
//		Callers:       4,
//		UntilAccepted: true, // each caller needs one request through
//		Policy:        p,
//		Duration:      30 * time.Second,
//	})
//	if err != nil { ... }
//	load.WriteTable(os.Stdout, res)
//
// Each logical request carries the caller's id (X-Client-Id), its own id
// (X-Request-Id, and Idempotency-Key for a POST, so it may be retried;
// Config.NoIdempotencyKey sends none and retries anyway, the client whose
// double charges package gateway's charge route counts), and
// on every attempt the hop protocol's Recoil-Attempt, so a gateway can
// count by client, by logical request and by attempt number. The command
// "recoil load" runs this package.
package load
