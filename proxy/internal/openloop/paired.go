package openloop

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"
)

// This file compares servers so that the machine's noise is common to
// them: Mixed sends each due call to one of them by a seeded coin, one
// open loop for all, and measures each slice of it per server; Alternate
// runs them one after the other in short slices, in an order the seed
// shuffles, for the figures only a server alone can give (the process's
// CPU time and allocations per call).

// Spread is a figure's median over paired slices, with its quartiles and
// a 95% confidence interval for the median.
type Spread[T time.Duration | float64] struct {
	Median, Q1, Q3 T
	// Lo and Hi bound the median with 95% confidence, whatever the
	// slices' distribution: the order statistics k and N-1-k of the
	// sorted slices, k = ⌊(N − 1.96·√N)/2⌋ (the sign test's interval);
	// the extremes when N is under 6.
	Lo, Hi T
	N      int // slices it is taken over
}

// spreadOf returns v's median, quartiles and the median's 95% interval
// (v is sorted in place).
func spreadOf[T time.Duration | float64](v []T) Spread[T] {
	if len(v) == 0 {
		return Spread[T]{}
	}
	slices.Sort(v)
	n := len(v) - 1
	k := max(int((float64(len(v))-1.96*math.Sqrt(float64(len(v))))/2), 0)
	return Spread[T]{Median: v[n/2], Q1: v[n/4], Q3: v[n*3/4], Lo: v[k], Hi: v[n-k], N: len(v)}
}

// Mix is what Mixed measured: each call's latency (negative when it
// was not answered 200), by slice and by server.
type Mix struct {
	lat [][][]time.Duration // [slice][server]
	k   int
}

// Mixed posts body at rate calls a second, in all, for slices slices of
// slice each, one open loop: each call, when due, goes to one of urls
// chosen by a coin seeded with seed, on a goroutine of its own, and its
// latency counts from when it was due. Every server meets the same
// moments of the machine, so a difference between them within the run
// is theirs, not the machine's.
func Mixed(ctx context.Context, c *http.Client, urls []string, body string, rate float64, slice time.Duration, slices int, seed uint64) *Mix {
	per := int(rate * slice.Seconds())
	n := per * slices
	interval := time.Duration(float64(time.Second) / rate)
	coin := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	to := make([]int, n)
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	timer := time.NewTimer(0)
	<-timer.C
	start := time.Now()
	for i := range n {
		to[i] = coin.IntN(len(urls))
		due := start.Add(time.Duration(i) * interval)
		if !sleepUntil(ctx, timer, due) {
			wg.Wait()
			return &Mix{k: len(urls)}
		}
		wg.Add(1)
		go func(url string) {
			defer wg.Done()
			if call(ctx, c, url, body) {
				lat[i] = time.Since(due)
			} else {
				lat[i] = -1
			}
		}(urls[to[i]])
	}
	wg.Wait()
	m := &Mix{lat: make([][][]time.Duration, slices), k: len(urls)}
	for i, d := range lat {
		s := i / per
		if m.lat[s] == nil {
			m.lat[s] = make([][]time.Duration, len(urls))
		}
		m.lat[s][to[i]] = append(m.lat[s][to[i]], d)
	}
	return m
}

// Slices returns each slice's Result per server: calls, answered, p50,
// p99 (Rate, Elapsed, Mallocs and CPU are not measured).
func (m *Mix) Slices() [][]Result {
	out := make([][]Result, len(m.lat))
	for s, sl := range m.lat {
		out[s] = make([]Result, m.k)
		for i, v := range sl {
			out[s][i] = tally(v)
		}
	}
	return out
}

// All returns each server's Result over the whole run.
func (m *Mix) All() []Result {
	out := make([]Result, m.k)
	for i := range m.k {
		var v []time.Duration
		for _, sl := range m.lat {
			v = append(v, sl[i]...)
		}
		out[i] = tally(v)
	}
	return out
}

// Added returns, for quantile q (0.5, 0.99), server i's quantile less
// server 0's over the whole run, with a 95% interval from a bootstrap
// over the slices: n times, as many slices drawn at random with
// replacement (a coin seeded with seed) and the difference taken over
// them; Lo and Hi are the 2.5th and 97.5th percentiles of those
// differences, Q1 and Q3 their quartiles, N the slices. Drawing whole
// slices keeps what the machine did at each moment common to both.
func (m *Mix) Added(i int, q float64, n int, seed uint64) Spread[time.Duration] {
	all := m.All()
	if len(m.lat) == 0 || all[i].OK == 0 || all[0].OK == 0 {
		return Spread[time.Duration]{}
	}
	coin := rand.New(rand.NewPCG(seed, 0xbb67ae8584caa73b))
	diffs := make([]time.Duration, 0, n)
	var a, b []time.Duration
	for range n {
		a, b = a[:0], b[:0]
		for range m.lat {
			sl := m.lat[coin.IntN(len(m.lat))]
			a, b = appendOK(a, sl[0]), appendOK(b, sl[i])
		}
		if len(a) > 0 && len(b) > 0 {
			diffs = append(diffs, quantile(b, q)-quantile(a, q))
		}
	}
	slices.Sort(diffs)
	full := quantile(okOnly(m.lat, i), q) - quantile(okOnly(m.lat, 0), q)
	if len(diffs) == 0 {
		return Spread[time.Duration]{Median: full, N: len(m.lat)}
	}
	at := func(p float64) time.Duration { return diffs[int(p*float64(len(diffs)-1))] }
	return Spread[time.Duration]{Median: full, Q1: at(0.25), Q3: at(0.75), Lo: at(0.025), Hi: at(0.975), N: len(m.lat)}
}

func appendOK(dst, lat []time.Duration) []time.Duration {
	for _, d := range lat {
		if d >= 0 {
			dst = append(dst, d)
		}
	}
	return dst
}

func okOnly(lat [][][]time.Duration, i int) []time.Duration {
	var v []time.Duration
	for _, sl := range lat {
		v = appendOK(v, sl[i])
	}
	return v
}

// quantile returns the q quantile of lat (sorted in place), as Run takes
// it.
func quantile(lat []time.Duration, q float64) time.Duration {
	slices.Sort(lat)
	return lat[(len(lat)-1)*int(math.Round(q*1000))/1000]
}

// tally makes a Result of one server's latencies (negative: not
// answered).
func tally(lat []time.Duration) Result {
	r := Result{Calls: len(lat)}
	ok := appendOK(nil, lat)
	r.OK = len(ok)
	r.P50, r.P99 = quantiles(ok)
	return r
}

// quantiles returns the p50 and p99 of lat, sorted in place; zero when
// it is empty.
func quantiles(lat []time.Duration) (p50, p99 time.Duration) {
	if len(lat) == 0 {
		return 0, 0
	}
	return quantile(lat, 0.5), quantile(lat, 0.99)
}

// Alternate runs each of urls alone at rate calls a second for slice
// (Run: its allocations and CPU time are then the server's), rounds
// times, the servers' order in each round shuffled by a coin seeded with
// seed, and returns each round's Result per server (in urls' order).
func Alternate(ctx context.Context, c *http.Client, urls []string, body string, rate float64, slice time.Duration, rounds int, seed uint64) [][]Result {
	coin := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909))
	out := make([][]Result, rounds)
	order := make([]int, len(urls))
	for r := range rounds {
		for i := range order {
			order[i] = i
		}
		coin.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		out[r] = make([]Result, len(urls))
		for _, i := range order {
			out[r][i] = Run(ctx, c, urls[i], body, rate, slice)
		}
	}
	return out
}

// Twins posts body to urls[0] and urls[1] at the same moments: rate/2
// pairs a second for d (rate calls a second in all), each pair's two
// calls started together on goroutines of their own, which one first
// decided by a coin seeded with seed. For every pair whose two calls were
// both answered 200 it returns the second server's latency less the
// first's, in two lists by which server's call was started first: a
// difference in which whatever delayed both — the machine at that moment
// — cancels. The call started first tends to be answered first; TwinSpread
// takes the two orders' medians so that this cancels too.
func Twins(ctx context.Context, c *http.Client, urls [2]string, body string, rate float64, d time.Duration, seed uint64) (firstA, firstB []time.Duration) {
	return TwinPairs(ctx, c, urls, body, rate, d, seed).Diffs()
}

// Pairs is what TwinPairs measured: each pair's two latencies (negative
// when that call was not answered 200), in urls' order, and which server's
// call was started first.
type Pairs struct {
	Lat      [][2]time.Duration
	First    []int
	PerSlice int // pairs a second: the blocks Added resamples
}

// TwinPairs runs what Twins describes and returns every pair's latencies.
func TwinPairs(ctx context.Context, c *http.Client, urls [2]string, body string, rate float64, d time.Duration, seed uint64) *Pairs {
	pairs := int(rate / 2 * d.Seconds())
	interval := time.Duration(2 * float64(time.Second) / rate)
	coin := rand.New(rand.NewPCG(seed, 0x3c6ef372fe94f82b))
	p := &Pairs{Lat: make([][2]time.Duration, pairs), First: make([]int, pairs), PerSlice: max(int(rate/2), 1)}
	var wg sync.WaitGroup
	timer := time.NewTimer(0)
	<-timer.C
	start := time.Now()
	for i := range pairs {
		p.First[i] = coin.IntN(2)
		due := start.Add(time.Duration(i) * interval)
		if !sleepUntil(ctx, timer, due) {
			wg.Wait()
			return &Pairs{PerSlice: p.PerSlice}
		}
		for _, s := range [2]int{p.First[i], 1 - p.First[i]} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if call(ctx, c, urls[s], body) {
					p.Lat[i][s] = time.Since(due)
				} else {
					p.Lat[i][s] = -1
				}
			}()
		}
	}
	wg.Wait()
	return p
}

// Diffs returns, for every pair whose two calls were both answered, the
// second server's latency less the first's, in two lists by which
// server's call was started first (Twins).
func (p *Pairs) Diffs() (firstA, firstB []time.Duration) {
	for i, l := range p.Lat {
		if l[0] < 0 || l[1] < 0 {
			continue
		}
		if p.First[i] == 0 {
			firstA = append(firstA, l[1]-l[0])
		} else {
			firstB = append(firstB, l[1]-l[0])
		}
	}
	return firstA, firstB
}

// Added returns the q quantile (0.99) of the second server's latencies
// over the pairs both of whose calls were answered, less that of the
// first's: a tail difference in which each slow moment of the machine — a
// collection, a burst — met one call of each server, where in a mixed run
// the coin shares each such moment's few calls out unevenly and moves
// either server's p99 by itself. Each server started first in about half
// the pairs, so the head start weighs on both alike. The 95% interval,
// quartiles and N are a bootstrap over blocks of PerSlice consecutive
// pairs (a second's), n resamplings with a coin seeded with seed, as
// Mix.Added draws slices.
func (p *Pairs) Added(q float64, n int, seed uint64) Spread[time.Duration] {
	var blocks [][][2]time.Duration
	for i := 0; i < len(p.Lat); i += p.PerSlice {
		var b [][2]time.Duration
		for _, l := range p.Lat[i:min(i+p.PerSlice, len(p.Lat))] {
			if l[0] >= 0 && l[1] >= 0 {
				b = append(b, l)
			}
		}
		blocks = append(blocks, b)
	}
	diff := func(pick func(int) [][2]time.Duration) (time.Duration, bool) {
		var a, b []time.Duration
		for i := range blocks {
			for _, l := range pick(i) {
				a, b = append(a, l[0]), append(b, l[1])
			}
		}
		if len(a) == 0 {
			return 0, false
		}
		return quantile(b, q) - quantile(a, q), true
	}
	full, ok := diff(func(i int) [][2]time.Duration { return blocks[i] })
	if !ok {
		return Spread[time.Duration]{}
	}
	coin := rand.New(rand.NewPCG(seed, 0x510e527fade682d1))
	diffs := make([]time.Duration, 0, n)
	for range n {
		if d, ok := diff(func(int) [][2]time.Duration { return blocks[coin.IntN(len(blocks))] }); ok {
			diffs = append(diffs, d)
		}
	}
	if len(diffs) == 0 {
		return Spread[time.Duration]{Median: full, N: len(blocks)}
	}
	slices.Sort(diffs)
	at := func(f float64) time.Duration { return diffs[int(f*float64(len(diffs)-1))] }
	return Spread[time.Duration]{Median: full, Q1: at(0.25), Q3: at(0.75), Lo: at(0.025), Hi: at(0.975), N: len(blocks)}
}

// TwinSpread is the difference Twins measured: the mean of the two
// orders' medians (each order's head start, the same size with the sign
// reversed, cancels), its interval the mean of the two medians' 95%
// intervals, its quartiles those of both lists together; N counts the
// pairs.
func TwinSpread(firstA, firstB []time.Duration) Spread[time.Duration] {
	if len(firstA) == 0 || len(firstB) == 0 {
		return Spread[time.Duration]{}
	}
	both := spreadOf(append(slices.Clone(firstA), firstB...))
	a, b := spreadOf(firstA), spreadOf(firstB)
	return Spread[time.Duration]{Median: (a.Median + b.Median) / 2, Lo: (a.Lo + b.Lo) / 2, Hi: (a.Hi + b.Hi) / 2,
		Q1: both.Q1, Q3: both.Q3, N: both.N}
}
