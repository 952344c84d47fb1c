// Package recoilprom exports recoil's retry metrics as Prometheus
// collectors: attempts by outcome, retries per call, the time calls spent
// waiting, stop reasons, budget refusals, breaker state, limiter queue
// waits, hedges and wasted attempts, and under a Fallback the attempts per
// target and the moves between targets by why, all labelled with a policy
// name you choose (a dependency's name, never a URL or a key) so their
// cardinality stays bounded.
//
// The metrics mean what package recoilotel's OpenTelemetry metrics mean,
// and their names are the ones OpenTelemetry's Prometheus exporter gives
// those (its labels carry the attributes' recoil_ prefix: recoil_policy for
// policy). docs/observability.md lists them, with a dashboard's queries.
//
// # Usage
//
//	m := recoilprom.NewMetrics()
//	prometheus.MustRegister(m)
//
//	obs, err := m.Policy("payments")
//	if err != nil {
//		return err
//	}
//	p := &recoil.Policy{
//		Breaker: breaker.Must(breaker.New(breaker.Settings{OnStateChange: obs.BreakerHook()})),
//		Limiter: limit.Must(limit.New(limit.Config{Capacity: 24, MaxQueue: 48})),
//	}
//	obs.Instrument(p) // Observe, OnAttempt, and the limiter's queue wait
//
// A policy's series are created with its Observer, at zero, so rate() sees
// the first increment; a Fallback's targets' when Instrument is given the
// policy (an unnamed target's when a call first reports it). A target's
// label is its name, cut to 64 bytes; a policy labels at most 16 targets,
// and the rest as target="other". Recording takes no allocation.
//
// # Fleet fallbacks
//
// Metrics.Fleet exports a fleet client's decisions that fell back to the
// local share (recoil_fleet_fallbacks_total, by cause: Redis unreachable,
// or Redis answering with an error), read from the client at each scrape:
//
//	c, err := fleet.New(fleet.Config{Redis: rdb})
//	…
//	if err := m.Fleet("main", c); err != nil {
//		return err
//	}
//
// It takes the client through the FleetCounter interface, so this package
// does not import the fleet module or its Redis client.
package recoilprom
