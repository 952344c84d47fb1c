// Package openloop drives an HTTP endpoint with an open-loop load — calls
// that arrive at a fixed rate whether or not the earlier ones have been
// answered, as a proxy's clients arrive — and measures each call's latency
// from the moment it was due, so that a server that falls behind is seen
// falling behind (no coordinated omission). The proxy's benchmarks use it
// to compare proxies side by side on one upstream.
package openloop

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Result is what one run measured.
type Result struct {
	Rate     float64       // the arrivals asked for, per second
	Calls    int           // calls made
	OK       int           // calls answered 200 with their body read
	P50, P99 time.Duration // latency quantiles of the answered calls, from when each was due
	Elapsed  time.Duration // from the first arrival to the last answer
	Mallocs  uint64        // heap allocations in the whole process during the run
	CPU      time.Duration // CPU time (user and system) of the whole process during the run
}

// CPUPerCall returns the process's CPU time per call.
func (r Result) CPUPerCall() time.Duration {
	if r.Calls == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Calls)
}

// cpuTime is the CPU time, user and system, the process has used; 0
// where it cannot be read.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PerSecond returns the calls answered 200 per second of the run.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// AllocsPerCall returns the process's heap allocations per call.
func (r Result) AllocsPerCall() float64 {
	if r.Calls == 0 {
		return 0
	}
	return float64(r.Mallocs) / float64(r.Calls)
}

// Client returns an HTTP client for runs: keep-alive connections enough
// for every call in flight, so that the run measures the server rather
// than new connections.
func Client() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 4096
	t.MaxIdleConnsPerHost = 4096
	return &http.Client{Transport: t, Timeout: 10 * time.Second}
}

// Run posts body to url at rate calls a second for d, each call on a
// goroutine of its own, and returns what it measured. A call's latency
// runs from when it was due, not from when it started.
func Run(ctx context.Context, c *http.Client, url, body string, rate float64, d time.Duration) Result {
	n := int(rate * d.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	lat := make([]time.Duration, n)
	var ok atomic.Int64
	var wg sync.WaitGroup
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	timer := time.NewTimer(0)
	<-timer.C
	start := time.Now()
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		if !sleepUntil(ctx, timer, due) {
			return Result{Rate: rate}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if call(ctx, c, url, body) {
				lat[i] = time.Since(due)
				ok.Add(1)
			} else {
				lat[i] = -1
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	runtime.ReadMemStats(&m1)
	r := Result{Rate: rate, Calls: n, OK: int(ok.Load()), Elapsed: elapsed, Mallocs: m1.Mallocs - m0.Mallocs, CPU: cpuTime() - cpu0}
	lat = slices.DeleteFunc(lat, func(d time.Duration) bool { return d < 0 })
	slices.Sort(lat)
	if len(lat) > 0 {
		r.P50 = lat[(len(lat)-1)*50/100]
		r.P99 = lat[(len(lat)-1)*99/100]
	}
	return r
}

// call posts body to url and reports whether the answer was a 200 whose
// body was read to its end.
func call(ctx context.Context, c *http.Client, url, body string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-client")
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return false
	}
	return resp.StatusCode == http.StatusOK
}

// Sustained reports whether a run kept up: every call answered 200, p99
// under maxP99.
func (r Result) Sustained(maxP99 time.Duration) bool {
	return r.Calls > 0 && r.OK == r.Calls && r.P99 < maxP99
}

// Highest runs url at each of rates in turn, for d each, and returns the
// highest rate whose run was Sustained under maxP99, with every run; it
// stops at the first rate not sustained. A rate of 0 means none was.
func Highest(ctx context.Context, c *http.Client, url, body string, rates []float64, d, maxP99 time.Duration) (float64, []Result) {
	best := 0.0
	var runs []Result
	for _, rate := range rates {
		r := Run(ctx, c, url, body, rate, d)
		runs = append(runs, r)
		if !r.Sustained(maxP99) {
			break
		}
		best = rate
	}
	return best, runs
}

// Closed runs callers goroutines, each posting body to url one call after
// another for d, and returns the calls answered 200 per second: the
// throughput the server reaches when nothing waits.
func Closed(ctx context.Context, c *http.Client, url, body string, callers int, d time.Duration) float64 {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var ok atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if call(ctx, c, url, body) {
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(ok.Load()) / time.Since(start).Seconds()
}

// Server is one of the servers a comparison runs: its name, the short tag
// its metrics are reported under, and the URL its calls go to.
type Server struct {
	Name, Tag, URL string
}

// Figures are one server's measurements in a comparison.
type Figures struct {
	Server
	// P50 and P99 are over all its calls of the mixed run.
	P50, P99 time.Duration
	// AddedP50 and AddedP99 are its p50 and p99 less the reference's over
	// the whole mixed run (Median), with the bootstrap's quartiles and 95%
	// interval over its slices (Mix.Added). Zero for the reference.
	AddedP50, AddedP99 Spread[time.Duration]
	// SliceP50 is its p50 less the reference's slice by slice: median,
	// quartiles and the median's 95% interval over the slices.
	SliceP50 Spread[time.Duration]
	// Twin is its latency less the reference's over calls made in pairs,
	// one to each at the same moment (Twins, TwinSpread).
	Twin Spread[time.Duration]
	// TwinP99 is its p99 less the reference's over the same pairs
	// (Pairs.Added): a tail difference in which every slow moment met
	// one call of each.
	TwinP99 Spread[time.Duration]
	// AllocsPerCall and CPUPerCall are the whole process's while it ran
	// alone (Alternate): medians over the rounds.
	AllocsPerCall float64
	CPUPerCall    time.Duration
	// AddedAllocs and AddedCPU are AllocsPerCall and CPUPerCall less the
	// reference's in the same round: median and quartiles over the rounds.
	AddedAllocs    Spread[float64]
	AddedCPU       Spread[time.Duration]
	Throughput     float64 // calls a second with Callers callers and no waits
	SustainedAtTop bool    // every call of the mixed run answered, p99 over them under the bound
}

// bootstraps is how many resamplings of the slices bound a difference.
const bootstraps = 400

// Plan is what Compare runs.
type Plan struct {
	Body    string        // each call's body
	Rates   []float64     // the rates to try on the first server, increasing
	Step    time.Duration // each rate's run while finding the rate
	MaxP99  time.Duration // the p99 the first server must stay under
	Slice   time.Duration // each slice of the mixed run
	Slices  int           // slices of the mixed run, and rounds of Alternate
	Alone   time.Duration // each server's run in a round of Alternate
	Seed    uint64        // the coins' seed
	Run     time.Duration // each closed-loop run
	Callers int           // closed-loop callers for the throughput
}

// Compare finds the highest of p.Rates that servers[0] (the reference)
// sustains; at that rate it runs the servers mixed (Mixed: each call to
// one of them by a seeded coin, one step unmeasured and then p.Slices
// slices of p.Slice), then alone in turn (Alternate: p.Slices rounds of
// p.Alone each, in shuffled order), then each other server in pairs of
// calls with the reference (TwinPairs, as long as the mixed run), and
// measures each one's closed-loop throughput. It returns the rate, the
// ladder's runs, and each server's figures, its differences from the
// reference taken slice by slice (latency), pair by pair and round by
// round (CPU time, allocations).
func Compare(ctx context.Context, c *http.Client, servers []Server, p Plan) (float64, []Result, []Figures) {
	rate, ladder := Highest(ctx, c, servers[0].URL, p.Body, p.Rates, p.Step, p.MaxP99)
	at := rate
	if at == 0 {
		at = p.Rates[0] // none was sustained: measured at the lowest, and said so
	}
	urls := make([]string, len(servers))
	for i, s := range servers {
		urls[i] = s.URL
	}
	// The ladder ran on the reference alone, filling its connection
	// pools (the client's to it, its own to the upstream) for the rate:
	// a step mixed, not measured, fills the others' too, so that no
	// server's calls in the measured run open connections the others'
	// found open.
	Mixed(ctx, c, urls, p.Body, at, p.Step, 1, p.Seed+1)
	mix := Mixed(ctx, c, urls, p.Body, at, p.Slice, p.Slices, p.Seed)
	perSlice, all := mix.Slices(), mix.All()
	rounds := Alternate(ctx, c, urls, p.Body, at, p.Alone, p.Slices, p.Seed)
	figs := make([]Figures, len(servers))
	for i, s := range servers {
		f := Figures{Server: s}
		if i < len(all) {
			f.P50, f.P99 = all[i].P50, all[i].P99
			f.SustainedAtTop = all[i].Sustained(p.MaxP99)
		}
		var d50, cpu, dcpu []time.Duration
		var allocs, dallocs []float64
		for _, sl := range perSlice {
			if sl[i].OK > 0 && sl[0].OK > 0 {
				d50 = append(d50, sl[i].P50-sl[0].P50)
			}
		}
		for _, r := range rounds {
			cpu, allocs = append(cpu, r[i].CPUPerCall()), append(allocs, r[i].AllocsPerCall())
			dcpu, dallocs = append(dcpu, r[i].CPUPerCall()-r[0].CPUPerCall()), append(dallocs, r[i].AllocsPerCall()-r[0].AllocsPerCall())
		}
		f.CPUPerCall, f.AllocsPerCall = spreadOf(cpu).Median, spreadOf(allocs).Median
		if i > 0 {
			f.AddedP50, f.AddedP99 = mix.Added(i, 0.5, bootstraps, p.Seed), mix.Added(i, 0.99, bootstraps, p.Seed)
			f.SliceP50 = spreadOf(d50)
			pairs := TwinPairs(ctx, c, [2]string{urls[0], urls[i]}, p.Body, at, p.Slice*time.Duration(p.Slices), p.Seed)
			f.Twin, f.TwinP99 = TwinSpread(pairs.Diffs()), pairs.Added(0.99, bootstraps, p.Seed)
			f.AddedCPU, f.AddedAllocs = spreadOf(dcpu), spreadOf(dallocs)
		}
		f.Throughput = Closed(ctx, c, s.URL, p.Body, p.Callers, p.Run)
		figs[i] = f
	}
	return rate, ladder, figs
}

// sleepUntil waits on timer, stopped and drained, until due, and reports
// whether due came before ctx was done. A due already past returns at once.
func sleepUntil(ctx context.Context, timer *time.Timer, due time.Time) bool {
	w := time.Until(due)
	if w <= 0 {
		return true
	}
	timer.Reset(w)
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
