// Package gateway is a fault-injecting HTTP server that plays a dependency
// and counts, from the receiving side, what its callers send it.
//
// Most writing about retries tells the caller's story. The other side's
// story (docs/why.md, section 6) counts how many attempts arrived, and how
// many of those landed within the same 200 milliseconds — because a
// dependency that is briefly down does not care that you tried again, it
// cares how many of you tried again at the same instant. A Gateway counts exactly that, on a
// real socket, and it can make the outage last as long as the load keeps
// it down, the feedback a fixed-length outage cannot model.
//
// # Faults
//
// A Config (or a YAML timeline file, ParseTimeline) sets the faults:
// outage windows with a status, a rate and an optional load-dependent
// recovery; a random failure rate; a latency distribution (constant,
// uniform, exponential); a validator that rejects a named JSON field with a
// provider-style 400 (a deterministic failure, docs/why.md, section 1); a
// per-key allowance per minute answering 429 with Retry-After; 529 overloaded with
// x-should-retry; streamed answers (server-sent events) that stall
// mid-stream; and a front end that takes one attempt at a time
// (Config.Serial), as a transport that serialises its requests does.
//
// # Counting
//
// Attempts are counted in total, per client (X-Client-Id, or the remote
// IP), per logical request (X-Request-Id, or the Idempotency-Key), by the
// attempt number of the hop protocol (Recoil-Attempt, package hop), and as
// the peak within any window: a sliding window at millisecond resolution,
// so the peak is the most attempts whose arrival times fall within any
// 200 ms span, wherever it starts (package tally, whose Window is the
// counter usable alone).
// The counts are exact under concurrency: the time-dependent state is
// updated under one short lock, the per-key maps are sharded under their
// own locks, the rest are atomic counters.
//
// # Usage
//
//	g, err := gateway.New(gateway.Config{
//		Outages: []gateway.Outage{{Duration: 700 * time.Millisecond}},
//	})
//	if err != nil { ... } // a field not valid: see New
//	ln, err := g.Listen() // 127.0.0.1 on a port the system chooses
//	if err != nil { ... }
//	go g.Serve(ctx, ln)   // until ctx is done
//	url := "http://" + ln.Addr().String() + "/v1/messages"
//	// ... drive url with callers (package load does) ...
//	s := g.Stats()
//	fmt.Println(s.Attempts, s.Accepted, s.Peak)
//
// While it runs, GET / is a live page of attempts per window, /stats the
// counts as JSON and /metrics the same for Prometheus.
//
// The charge route (/v1/charges, Config.Charge) is a dependency with a
// side effect: it counts its charges per logical request and reports the
// double ones (Stats.Charges); it can drop the connection after charging,
// and honour Idempotency-Key with package idempotency's middleware, so
// "recoil load" can show the duplicates a keyless retry makes and the
// none the keys leave. The command
// "recoil gateway" serves one; "recoil load" drives one.
package gateway
