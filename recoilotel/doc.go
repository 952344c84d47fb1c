// Package recoilotel makes recoil's retries visible in OpenTelemetry: one
// CLIENT span per HTTP attempt (Transport; package grpcotel does the same
// for gRPC), the waits between attempts and a call's giving up as events
// on the caller's span, and metrics — attempts by outcome, retries per
// call, retry delay, stop reasons, budget refusals, breaker state,
// limiter queue wait, hedges and wasted attempts, and under a Fallback the
// attempts per target and the moves between targets by why — named in the
// style of gRFC A96 and labelled with a policy name you choose (a
// dependency's name, never a URL or a key).
//
// Package recoilprom exports the same metrics to Prometheus without
// OpenTelemetry; through OpenTelemetry's Prometheus exporter these come out
// under the same names (docs/observability.md lists them, with a
// dashboard's queries and the span shape).
//
// Spans and metrics, gRPC's included, are made under one instrumentation
// scope, the module's path: github.com/recoil-go/recoil.
//
// The attempt spans follow the semantic conventions, which set
// http.request.resend_count on resends only: the first attempt has none,
// the second 1, the third 2.
//
// # Usage
//
//	m, err := recoilotel.NewMetrics() // the global MeterProvider
//	if err != nil {
//		return err
//	}
//	obs, err := m.Policy("models")
//	if err != nil {
//		return err
//	}
//	p := &recoil.Policy{Breaker: breaker.Must(breaker.New(breaker.Settings{OnStateChange: obs.BreakerHook()}))}
//	obs.Instrument(p) // metrics, and wait events on the caller's span
//
//	client := &http.Client{Transport: recoilotel.NewTransport(&recoilhttp.Transport{Policy: p})}
//	resp, err := client.Do(req.WithContext(ctx)) // one span per attempt under ctx's span
//
// Metrics.Fleet reports a fleet client's decisions that fell back to the
// local share (recoil.fleet.fallbacks, by cause: Redis unreachable, or
// Redis answering with an error), read from the client at each collection.
// It takes the client through the FleetCounter interface, so this package
// does not import the fleet module or its Redis client.
//
// Recording a metric takes no allocation: every attribute set is built
// when the policy's Observer is, or a Fallback target's when Instrument
// or the first call meets it. A target's attribute is its name, cut to 64
// bytes; a policy labels at most 16 targets, and the rest as "other". A
// span costs what the SDK's spans cost;
// docs/benchmarks.md measures both.
package recoilotel
