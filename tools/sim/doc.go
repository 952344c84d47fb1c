// Package sim is a discrete-event simulator for retry policies: it runs the
// real recoil decision, backoff, budget and breaker code on virtual time,
// against models of the systems docs/why.md describes, so a policy's blast
// radius can be seen before it ships.
//
// # Usage
//
//	s, err := sim.Load("scenarios/gateway-outage.yaml") // or sim.Parse(name, data)
//	if err != nil {
//		return err // an *sim.Error: file, line and field
//	}
//	res, err := sim.Run(ctx, s, sim.Options{Seed: 1})
//	if err != nil {
//		return err
//	}
//	res.WriteText(os.Stdout) // or WriteJSON, WriteCSV (the time series)
//
// The command "recoil sim" does the same from the shell, with the built-in
// scenarios (package scenarios) available by name:
//
//	recoil sim gateway-outage
//	recoil sim -seed 7 -json blast-radius.yaml
//	recoil sim -csv series.csv -o chart.svg two-hour-blip
//
// # What is simulated
//
// A Scenario lists services, clients and the policies to compare. A
// service has workers, a FIFO queue (bounded or not), a service-time
// distribution (constant, exponential, lognormal, |normal|, uniform), a
// failure probability, endpoints it always rejects (a validator's 400),
// outage windows (failing, overloaded, or dropping requests, or slowing
// them to a service time of their own, or refusing them as a provider
// does: a retired model's 404, a revoked key's 401, a spent quota's 429;
// recovery can be held back while the offered load stays above a
// threshold), a slow tail (a share of requests, all through the run, with
// a service time of their own), and a
// per-organisation allowance per minute (a 429 with Retry-After to the next
// minute). A service may call another for each request with its own policy,
// holding its worker until that call and its retries are over; layers stack.
// A record service models one row under optimistic concurrency (read the
// version, write if unchanged). Clients are open-loop (Poisson arrivals) or
// closed-loop (callers that each wait for their call to end, think, and call
// again). A client may run as several replicas of one service, each with a
// policy of its own, or sharing one budget across the fleet (a budget of
// scope fleet, as package fleet keeps in Redis); every replica draws on
// the dependency's one allowance.
//
// A policy may send a call's attempts across several services, a fallback
// chain whose targets each name the service they reach (recoil.Fallback:
// each attempt goes to the service of Call.Target), or give each target a
// whole call of its own in turn, as the LLM gateways nest their loops
// (retries: per-target), to compare the two; and it may hedge: a call keeps
// several attempts in flight, each reported with SuccessOf or FailOf, and
// the attempts it drops carry on at their service as abandoned work
// (route.go).
//
// Every logical call steps recoil's one retry loop (recoil.Call) on virtual
// time, as recoil.Do and the HTTP Transport drive it on real time: Begin,
// Next before each attempt (the budget, limiter and breaker may refuse, and
// the call's deadline may have passed), Success or Fail with the verdict a
// careful transport would give, classified through the policy's Classify,
// and a wait before the next attempt that recoil's own Decide chose with the
// run's seeded random source. Every Policy field means what it means in
// recoil.Do; the one difference is that a full Limiter sheds at once, since
// nothing can queue on virtual time. An
// attempt timeout makes the caller give up on an attempt and re-send while
// the first copy carries on below (an orphan): it keeps its place in the
// queue and its worker, and the work done for it is counted as abandoned —
// capacity spent, and a request billed, for nobody — unless the service
// notices its caller hung up (ServiceSpec.CancelOnAbandon) and stops. With PolicySpec.Hop,
// the hop protocol's budget and deadline travel down the layers (package
// hop), and a layer does not start work whose caller's deadline has passed.
//
// # The engine
//
// Virtual time is an int64 of nanoseconds; events are 16-byte values in a
// radix heap (see queue); entities live in slabs indexed by the events, so
// nothing is allocated per event and memory follows the entities in flight
// (a finished run hands its slabs and the queue's buckets, cleared, to the
// next, so the runs of a sweep do not each allocate them again);
// there is one goroutine and one seed (PCG streams for services, policies,
// and each client's arrivals, so compared policies meet the same arrivals).
// The same seed gives byte-identical output.
//
// Results count attempts and successes, goodput, the busiest window's
// arrivals (200 ms by default), latency percentiles, queue waits, the
// attempts each service served for callers who had left (abandoned), and
// time series of arrivals, 429s, queue depth and busy workers per service.
package sim
