package sim

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSlowOutageErrors: a slow outage's fields are checked like every other
// field, with the file, the line and the field.
func TestSlowOutageErrors(t *testing.T) {
	const head = "name: x\nduration: 1m\nservices:\n  - name: s\n    workers: 2\n    service: 10ms\n    outages:\n"
	const tail = "clients:\n  - {name: c, target: s, rate: 10/s, policy: none}\n"
	tests := []struct {
		name      string
		outage    string
		wantLine  int
		wantField string
		wantMsg   string
	}{
		{"slow without a service time", "      - {start: 1s, duration: 1s, class: slow}\n", 8, "services[s].outages[0].service", "a slow outage needs the service time"},
		{"service time on a failing outage", "      - start: 1s\n        duration: 1s\n        service: 2s\n", 10, "services[s].outages[0].service", "applies only to an outage of class slow"},
		{"bad slow service time", "      - start: 1s\n        duration: 1s\n        class: slow\n        service: {dist: lognormal, mean: 0s}\n", 11, "services[s].outages[0].service.mean", "must be positive"},
		{"unknown class names slow", "      - {start: 1s, duration: 1s, class: sluggish}\n", 8, "services[s].outages[0].class", "want transient, overloaded, drop, slow, not-found, unauthorized or quota"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := head + tt.outage + tail
			_, err := Parse("slow.yaml", []byte(src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %v, want an *Error", err)
			}
			if e.File != "slow.yaml" || e.Line != tt.wantLine || e.Field != tt.wantField || !strings.Contains(e.Err.Error(), tt.wantMsg) {
				t.Errorf("Parse error = %q (line %d, field %q), want slow.yaml:%d, field %q, containing %q\n%s",
					err, e.Line, e.Field, tt.wantLine, tt.wantField, tt.wantMsg, numbered(src))
			}
		})
	}
	// A layer cannot cancel its call below.
	src := "name: x\nduration: 1m\nservices:\n  - name: a\n    calls: b\n    cancel_on_abandon: true\n  - name: b\n" +
		"clients:\n  - {name: c, target: a, rate: 1/s, policy: none}\npolicies: [{name: p}]\n"
	if _, err := Parse("layer.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "layer.yaml:6: services[a].cancel_on_abandon: applies only to a service that calls no other") {
		t.Errorf("Parse(cancelling layer) = %v, want layer.yaml:6 on cancel_on_abandon", err)
	}
	// A record has no service time to slow.
	src = "name: x\nduration: 1m\nservices:\n  - name: r\n    kind: record\n    latency: 1ms\n    outages:\n      - {start: 1s, duration: 1s, class: slow, service: 1s}\n" +
		"clients:\n  - {name: c, target: r, callers: 1, calls: 1, policy: none}\n"
	if _, err := Parse("record.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "record.yaml:8: services[r].outages[0].class: a record has no service time") {
		t.Errorf("Parse(slow record) = %v, want record.yaml:8 on the class", err)
	}
}

// TestSlowOutageAndAbandonedWork: during a slow outage requests take the
// outage's service time and nothing fails; a caller whose attempt timeout
// is shorter gives up and re-sends at once, and every attempt it gave up on
// is still served (counted as abandoned). One worker and one caller making
// one call at a time, so the figures can be worked out by hand.
//
// 50 ms requests, slowed to 500 ms from 1 s to 2 s: 20 calls before the
// outage, then with a 1 s attempt timeout two slowed calls (1.0–1.5 s,
// 1.5–2.0 s) and eight more to 2.4 s, one attempt each. With a 300 ms
// timeout, the call begun at 1.0 s gives up at 1.3 s and 1.6 s and fails
// at 1.9 s; its first copy holds the worker to 1.5 s, the second, begun
// then, to 2.0 s, the third to 2.05 s: all three served for nobody. The
// next call, begun at 1.9 s, gets the worker at 2.05 s and its answer at
// 2.1 s, and eight more calls follow: 30 calls, 29 through, 32 attempts,
// 3 of them abandoned.
//
// With cancel_on_abandon the worker stops when its caller's attempt times
// out: each copy of the call begun at 1.0 s holds it 300 ms (to 1.3, 1.6,
// 1.9 s), the next call's first copy, slowed at 1.9 s, is cut at 2.2 s and
// its second answers at 2.25 s: 33 attempts, 4 cancelled, none abandoned.
func TestSlowOutageAndAbandonedWork(t *testing.T) {
	const src = `name: slow
duration: 3s
services:
  - name: s
    workers: 1
    service: 50ms
    outages:
      - {start: 1s, duration: 1s, class: slow, service: 500ms}
clients:
  - name: c
    target: s
    callers: 1
    calls: 30
    attempt_timeout: 1s
    policy: {name: at once, max_attempts: 3, backoff: none, budget: none}
`
	tests := []struct {
		name    string
		timeout time.Duration
		cancel  bool
		check   func(t *testing.T, r RunResult, svc ServiceResult)
	}{
		{"timeout above the slow time", time.Second, false, func(t *testing.T, r RunResult, svc ServiceResult) {
			if r.Succeeded != 30 || svc.Arrivals != 30 || svc.Abandoned != 0 || r.Latency.Max != 500*time.Millisecond {
				t.Errorf("ok %d, arrivals %d, abandoned %d, slowest call %v; want 30, 30, 0, 500ms", r.Succeeded, svc.Arrivals, svc.Abandoned, r.Latency.Max)
			}
		}},
		{"timeout below the slow time", 300 * time.Millisecond, false, func(t *testing.T, r RunResult, svc ServiceResult) {
			if r.Succeeded != 29 || r.Failed != 1 || svc.Abandoned != 3 || svc.Arrivals != 32 {
				t.Errorf("ok %d, failed %d, abandoned %d, arrivals %d; want 29, 1, 3, 32", r.Succeeded, r.Failed, svc.Abandoned, svc.Arrivals)
			}
		}},
		{"the worker notices the caller left", 300 * time.Millisecond, true, func(t *testing.T, r RunResult, svc ServiceResult) {
			if r.Succeeded != 29 || r.Failed != 1 || svc.Abandoned != 0 || svc.Failures["cancelled"] != 4 || svc.Arrivals != 33 || r.Latency.Max != 900*time.Millisecond {
				t.Errorf("ok %d, failed %d, abandoned %d, cancelled %d, arrivals %d, slowest call %v; want 29, 1, 0, 4, 33, 900ms",
					r.Succeeded, r.Failed, svc.Abandoned, svc.Failures["cancelled"], svc.Arrivals, r.Latency.Max)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("slow.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			s.Clients[0].AttemptTimeout = tt.timeout
			s.Services[0].CancelOnAbandon = tt.cancel
			r := run(t, s, 1).Runs[0]
			svc := r.Services[0]
			t.Logf("ok %d, failed %d, unfinished %d; arrivals %d, served %d, abandoned %d; ended at %v", r.Succeeded, r.Failed, r.Unfinished, svc.Arrivals, svc.Served, svc.Abandoned, r.End)
			// Nothing fails at the service: every attempt served either
			// ended a call in success, was abandoned, or was cancelled.
			if svc.Served != svc.Succeeded+svc.Failures["cancelled"] || svc.Succeeded-svc.Abandoned != r.Succeeded {
				t.Errorf("served %d, succeeded %d, cancelled %d, abandoned %d, calls through %d; want served = succeeded + cancelled, succeeded = calls through + abandoned",
					svc.Served, svc.Succeeded, svc.Failures["cancelled"], svc.Abandoned, r.Succeeded)
			}
			tt.check(t, r, svc)
		})
	}
}
