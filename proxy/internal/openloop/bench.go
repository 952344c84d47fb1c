package openloop

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PlanFromEnv is the benchmarks' plan for calls with body: rates from 100
// to 8,000 a second, 1 s each, p99 under 5 ms; at the rate found, 30
// slices of 1 s mixed and 30 rounds of 0.5 s alone each, seed 1; 32
// closed-loop callers for 2 s. RECOIL_PROXY_RATES (calls a second,
// separated by commas), RECOIL_PROXY_SLICE, RECOIL_PROXY_SLICES,
// RECOIL_PROXY_ALONE, RECOIL_PROXY_SEED and RECOIL_PROXY_RUN (the
// closed-loop run) change it.
func PlanFromEnv(body string) Plan {
	p := Plan{
		Body: body, Rates: []float64{100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000},
		Step: time.Second, MaxP99: 5 * time.Millisecond, Slice: time.Second, Slices: 30,
		Alone: 500 * time.Millisecond, Seed: 1, Run: 2 * time.Second, Callers: 32,
	}
	if v := os.Getenv("RECOIL_PROXY_RATES"); v != "" {
		p.Rates = nil
		for _, f := range strings.Split(v, ",") {
			if r, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err == nil && r > 0 {
				p.Rates = append(p.Rates, r)
			}
		}
	}
	for name, d := range map[string]*time.Duration{"RECOIL_PROXY_SLICE": &p.Slice, "RECOIL_PROXY_ALONE": &p.Alone, "RECOIL_PROXY_RUN": &p.Run} {
		if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
			*d = v
		}
	}
	if n, err := strconv.Atoi(os.Getenv("RECOIL_PROXY_SLICES")); err == nil && n > 0 {
		p.Slices = n
	}
	if n, err := strconv.ParseUint(os.Getenv("RECOIL_PROXY_SEED"), 10, 64); err == nil {
		p.Seed = n
	}
	return p
}

// Report runs Compare on servers, the first the reference, and reports
// the rate, each server's figures and each one's difference from the
// reference (median over the paired slices, with quartiles in the log) as
// b's metrics (under each server's Tag), with the machine's one-minute
// load average before the run; it logs the ladder, the load average
// before and after, and a line per server.
func Report(b *testing.B, servers []Server, plan Plan) {
	if len(plan.Rates) == 0 {
		b.Fatal("openloop: no rates to run")
	}
	load0 := LoadAverage()
	rate, ladder, figs := Compare(context.Background(), Client(), servers, plan)
	load1 := LoadAverage()
	for _, r := range ladder {
		b.Logf("ladder %s: %.0f/s: %d/%d answered, p50 %v, p99 %v", servers[0].Name, r.Rate, r.OK, r.Calls, r.P50, r.P99)
	}
	if rate == 0 {
		b.Logf("%s sustained none of the rates: measured at %.0f/s", servers[0].Name, plan.Rates[0])
	}
	b.Logf("load average %.2f before, %.2f after (%d CPUs); %d slices of %v mixed, %d rounds of %v alone, seed %d",
		load0, load1, runtime.NumCPU(), plan.Slices, plan.Slice, plan.Slices, plan.Alone, plan.Seed)
	b.ReportMetric(rate, "rate/s")
	b.ReportMetric(load0, "loadavg")
	for i, f := range figs {
		b.Logf("%-22s p50 %8v  p99 %8v  %6.1f allocs/call  %7v CPU/call  %6.0f calls/s closed-loop  every call answered, p99 under bound: %v",
			f.Name, f.P50.Round(time.Microsecond), f.P99.Round(time.Microsecond), f.AllocsPerCall, f.CPUPerCall.Round(100*time.Nanosecond), f.Throughput, f.SustainedAtTop)
		b.ReportMetric(float64(f.P50.Microseconds()), f.Tag+"-p50-µs")
		b.ReportMetric(float64(f.P99.Microseconds()), f.Tag+"-p99-µs")
		b.ReportMetric(f.AllocsPerCall, f.Tag+"-allocs/call")
		b.ReportMetric(float64(f.CPUPerCall.Nanoseconds()), f.Tag+"-cpu-ns/call")
		b.ReportMetric(f.Throughput, f.Tag+"-calls/s")
		if i == 0 {
			continue
		}
		us := func(s Spread[time.Duration]) string {
			return fmt.Sprintf("%+.1f µs (95%% %+.1f…%+.1f; quartiles %+.1f, %+.1f)",
				micros(s.Median), micros(s.Lo), micros(s.Hi), micros(s.Q1), micros(s.Q3))
		}
		b.Logf("%-22s adds, over all calls of the mixed run (bootstrap over %d slices): p50 %s, p99 %s",
			f.Name, f.AddedP50.N, us(f.AddedP50), us(f.AddedP99))
		b.Logf("%-22s adds, median of the slices' p50 differences: %s", f.Name, us(f.SliceP50))
		b.Logf("%-22s adds, over %d twin pairs (one call to each at once; both orders' medians, averaged): %s", f.Name, f.Twin.N, us(f.Twin))
		b.Logf("%-22s adds, p99 over the same twin pairs (bootstrap over %d blocks of a second's pairs): %s", f.Name, f.TwinP99.N, us(f.TwinP99))
		b.Logf("%-22s adds, median over %d rounds alone: CPU/call %s, allocs/call %+.1f (quartiles %+.1f, %+.1f) over %s",
			f.Name, f.AddedCPU.N, us(f.AddedCPU), f.AddedAllocs.Median, f.AddedAllocs.Q1, f.AddedAllocs.Q3, servers[0].Name)
		b.ReportMetric(micros(f.AddedP50.Median), f.Tag+"-added-p50-µs")
		b.ReportMetric(micros(f.AddedP50.Lo), f.Tag+"-added-p50-lo-µs")
		b.ReportMetric(micros(f.AddedP50.Hi), f.Tag+"-added-p50-hi-µs")
		b.ReportMetric(micros(f.AddedP99.Median), f.Tag+"-added-p99-µs")
		b.ReportMetric(micros(f.Twin.Median), f.Tag+"-twin-added-µs")
		b.ReportMetric(micros(f.TwinP99.Median), f.Tag+"-twin-added-p99-µs")
		b.ReportMetric(micros(f.TwinP99.Lo), f.Tag+"-twin-added-p99-lo-µs")
		b.ReportMetric(micros(f.TwinP99.Hi), f.Tag+"-twin-added-p99-hi-µs")
		b.ReportMetric(micros(f.AddedP99.Lo), f.Tag+"-added-p99-lo-µs")
		b.ReportMetric(micros(f.AddedP99.Hi), f.Tag+"-added-p99-hi-µs")
		b.ReportMetric(micros(f.AddedCPU.Median), f.Tag+"-added-cpu-µs/call")
		b.ReportMetric(f.AddedAllocs.Median, f.Tag+"-added-allocs/call")
	}
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// LoadAverage is the machine's one-minute load average, 0 where it cannot
// be read.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	fs := strings.Fields(string(b))
	if len(fs) == 0 {
		return 0
	}
	f, _ := strconv.ParseFloat(fs[0], 64)
	return f
}
