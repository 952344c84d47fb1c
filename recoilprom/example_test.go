package recoilprom_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/limit"
	"github.com/recoil-go/recoil/recoilprom"
)

// printSeries prints reg's non-zero series: counters and gauges by value,
// histograms by count and sum.
func printSeries(reg *prometheus.Registry) {
	families, _ := reg.Gather()
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := ""
			for _, l := range m.GetLabel() {
				if l.GetName() != "policy" {
					if labels != "" {
						labels += ","
					}
					labels += fmt.Sprintf("%s=%q", l.GetName(), l.GetValue())
				}
			}
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM:
				if h := m.GetHistogram(); h.GetSampleCount() > 0 {
					fmt.Printf("%s count %d sum %g\n", f.GetName(), h.GetSampleCount(), h.GetSampleSum())
				}
			case dto.MetricType_GAUGE:
				fmt.Printf("%s{%s} %g\n", f.GetName(), labels, m.GetGauge().GetValue())
			default:
				if v := m.GetCounter().GetValue(); v > 0 {
					fmt.Printf("%s{%s} %g\n", f.GetName(), labels, v)
				}
			}
		}
	}
}

func ExampleNewMetrics() {
	m := recoilprom.NewMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m) // or prometheus.MustRegister(m), served by promhttp.Handler()

	obs, err := m.Policy("payments") // one per dependency; never a URL
	if err != nil {
		fmt.Println(err)
		return
	}
	p := &recoil.Policy{Backoff: backoff.Constant(10 * time.Millisecond)}
	obs.Instrument(p)

	calls := 0
	err = recoil.Do(context.Background(), p, func(context.Context) error {
		if calls++; calls == 1 {
			return errors.New("connection reset by peer")
		}
		return nil
	})
	fmt.Println("call:", err)
	printSeries(reg)
	// Output:
	// call: <nil>
	// recoil_attempts_total{outcome="success"} 1
	// recoil_attempts_total{outcome="transient"} 1
	// recoil_call_retries count 1 sum 1
	// recoil_call_retry_delay_seconds count 1 sum 0.01
	// recoil_retry_wait_seconds count 1 sum 0.01
	// recoil_stops_total{reason="none"} 1
}

func ExampleMetrics_Policy() {
	m := recoilprom.NewMetrics()
	_, err := m.Policy("https://api.example.com/v1")
	fmt.Println(err != nil)
	// Output: true
}

func ExampleObserver_BreakerHook() {
	m := recoilprom.NewMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	obs, _ := m.Policy("search")
	b := breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 1, OnStateChange: obs.BreakerHook()}))
	p := &recoil.Policy{MaxAttempts: 1, Breaker: b}
	obs.Instrument(p)

	_ = recoil.Do(context.Background(), p, func(context.Context) error { return errors.New("connection refused") })
	printSeries(reg)
	// Output:
	// recoil_attempts_total{outcome="transient"} 1
	// recoil_breaker_slow_call_rate{} 0
	// recoil_breaker_state{} 2
	// recoil_breaker_transitions_total{state="open"} 1
	// recoil_breaker_window_calls{} 0
	// recoil_breaker_window_slow_calls{} 0
	// recoil_call_retries count 1 sum 0
	// recoil_call_retry_delay_seconds count 1 sum 0
	// recoil_stops_total{reason="attempts exhausted"} 1
}

// A breaker that trips on slow calls, wrapped by Observer.Breaker (as
// Instrument does): its window's slow-call rate is read at each scrape,
// and the slow reports it is given apart from an outcome — the HTTP
// Transport's slow streams — are counted.
func ExampleObserver_Breaker() {
	m := recoilprom.NewMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	obs, _ := m.Policy("llm")
	b := obs.Breaker(breaker.Must(breaker.New(breaker.Settings{
		SlowCallRate: 0.9, SlowCallThreshold: 5 * time.Second, MinRequests: 10,
	})))
	now := time.Now()
	for _, latency := range []time.Duration{time.Second, 2 * time.Second, 8 * time.Second, time.Second} {
		b.RecordLatencyAt(now, breaker.Success, latency) // as the loop does for each attempt
	}
	b.RecordSlowAt(now) // a stream slow to flow, as the HTTP Transport reports one
	printSeries(reg)
	// Output:
	// recoil_breaker_slow_call_rate{} 0.5
	// recoil_breaker_slow_reports_total{} 1
	// recoil_breaker_window_calls{} 4
	// recoil_breaker_window_slow_calls{} 2
}

func ExampleObserver_Instrument() {
	m := recoilprom.NewMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	obs, _ := m.Policy("db")
	lim := limit.Must(limit.New(limit.Config{Capacity: 1, MaxQueue: 1}))
	p := &recoil.Policy{Limiter: lim}
	obs.Instrument(p) // p.Limiter is now obs.Limiter(lim)

	lim.TryAcquire() // someone else holds the only slot for 20 ms
	time.AfterFunc(20*time.Millisecond, lim.Release)
	_ = recoil.Do(context.Background(), p, func(context.Context) error { return nil })
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "recoil_limiter_queue_wait_seconds" {
			h := f.GetMetric()[0].GetHistogram()
			// The wait began when Do asked for the slot, which on a busy
			// machine may be most of the 20 ms after it was taken.
			fmt.Println("queued:", h.GetSampleCount(), "waited:", h.GetSampleSum() > 0)
		}
	}
	// Output: queued: 1 waited: true
}

// clientStats stands for a *fleet.Client (github.com/recoil-go/recoil/fleet),
// whose Fallbacks method Metrics.Fleet reads.
type clientStats struct{ unreachable, refused uint64 }

func (c *clientStats) Fallbacks() (unreachable, refused uint64) { return c.unreachable, c.refused }

func ExampleMetrics_Fleet() {
	m := recoilprom.NewMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)

	c := &clientStats{} // in a program: c, err := fleet.New(fleet.Config{Redis: rdb, …})
	if err := m.Fleet("main", c); err != nil {
		fmt.Println(err)
		return
	}
	c.refused = 3 // Redis answered three calls with an error reply
	printSeries(reg)

	fmt.Println(m.Fleet("main", c)) // one name per client
	// Output:
	// recoil_fleet_fallbacks_total{cause="refused",fleet="main"} 3
	// recoilprom: fleet "main": a fleet client of that name is already exported
}
