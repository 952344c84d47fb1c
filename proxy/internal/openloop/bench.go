package openloop

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PlanFromEnv is the benchmarks' plan for calls with body: rates from 100
// to 8,000 a second, 1 s each, p99 under 5 ms, three rounds of 2 s, 32
// closed-loop callers. RECOIL_PROXY_RATES (calls a second, separated by
// commas), RECOIL_PROXY_RUN (each measured run) and RECOIL_PROXY_ROUNDS
// change it.
func PlanFromEnv(body string) Plan {
	p := Plan{
		Body: body, Rates: []float64{100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000},
		Step: time.Second, MaxP99: 5 * time.Millisecond, Run: 2 * time.Second, Rounds: 3, Callers: 32,
	}
	if v := os.Getenv("RECOIL_PROXY_RATES"); v != "" {
		p.Rates = nil
		for _, f := range strings.Split(v, ",") {
			if r, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err == nil && r > 0 {
				p.Rates = append(p.Rates, r)
			}
		}
	}
	if d, err := time.ParseDuration(os.Getenv("RECOIL_PROXY_RUN")); err == nil && d > 0 {
		p.Run = d
	}
	if n, err := strconv.Atoi(os.Getenv("RECOIL_PROXY_ROUNDS")); err == nil && n > 0 {
		p.Rounds = n
	}
	return p
}

// Report runs Compare on servers, the first the reference, and reports
// the rate, each server's figures and each one's difference from the
// reference as b's metrics (under each server's Tag), with the machine's
// one-minute load average before the run; it logs the ladder, the load
// average before and after, and a line per server.
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
	b.Logf("load average %.2f before, %.2f after (%d CPUs)", load0, load1, runtime.NumCPU())
	b.ReportMetric(rate, "rate/s")
	b.ReportMetric(load0, "loadavg")
	ref := figs[0]
	for i, f := range figs {
		b.Logf("%-22s p50 %8v  p99 %8v  %6.1f allocs/call  %7v CPU/call  %6.0f calls/s closed-loop  every round sustained: %v",
			f.Name, f.P50.Round(time.Microsecond), f.P99.Round(time.Microsecond), f.AllocsPerCall, f.CPUPerCall.Round(100*time.Nanosecond), f.Throughput, f.SustainedAtTop)
		b.ReportMetric(float64(f.P50.Microseconds()), f.Tag+"-p50-µs")
		b.ReportMetric(float64(f.P99.Microseconds()), f.Tag+"-p99-µs")
		b.ReportMetric(f.AllocsPerCall, f.Tag+"-allocs/call")
		b.ReportMetric(float64(f.CPUPerCall.Nanoseconds()), f.Tag+"-cpu-ns/call")
		b.ReportMetric(f.Throughput, f.Tag+"-calls/s")
		if i > 0 {
			b.Logf("%-22s adds p50 %v, p99 %v, %+.1f allocs/call, %v CPU/call over %s", f.Name,
				(f.P50 - ref.P50).Round(time.Microsecond), (f.P99 - ref.P99).Round(time.Microsecond), f.AllocsPerCall-ref.AllocsPerCall,
				(f.CPUPerCall - ref.CPUPerCall).Round(100*time.Nanosecond), ref.Name)
			b.ReportMetric(float64((f.P50 - ref.P50).Microseconds()), f.Tag+"-added-p50-µs")
			b.ReportMetric(float64((f.P99 - ref.P99).Microseconds()), f.Tag+"-added-p99-µs")
		}
	}
}

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
