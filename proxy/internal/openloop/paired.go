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

// Mixed posts body at rate calls a second, in all, for slices slices of
// slice each, one open loop: each call, when due, goes to one of urls
// chosen by a coin seeded with seed, on a goroutine of its own, and its
// latency counts from when it was due. It returns, for each slice, each
// server's Result over the calls due in that slice (Rate is the server's
// share; Elapsed, Mallocs and CPU are not measured), and each server's
// Result over the whole run. Every server meets the same moments of the
// machine, so a difference between them within a slice is theirs, not the
// machine's.
func Mixed(ctx context.Context, c *http.Client, urls []string, body string, rate float64, slice time.Duration, slices int, seed uint64) (perSlice [][]Result, all []Result) {
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
		if w := time.Until(due); w > 0 {
			timer.Reset(w)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return nil, nil
			}
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
	share := rate / float64(len(urls))
	perSlice = make([][]Result, slices)
	for s := range slices {
		perSlice[s] = tally(lat[s*per:(s+1)*per], to[s*per:(s+1)*per], len(urls), share)
	}
	return perSlice, tally(lat, to, len(urls), share)
}

// tally sorts the latencies lat of calls sent to servers to (indices
// below k) into a Result per server.
func tally(lat []time.Duration, to []int, k int, rate float64) []Result {
	each := make([][]time.Duration, k)
	rs := make([]Result, k)
	for i, d := range lat {
		s := to[i]
		rs[s].Calls++
		if d >= 0 {
			rs[s].OK++
			each[s] = append(each[s], d)
		}
	}
	for s := range rs {
		rs[s].Rate = rate
		rs[s].P50, rs[s].P99 = quantiles(each[s])
	}
	return rs
}

// quantiles returns the p50 and p99 of lat, sorted in place; zero when
// it is empty.
func quantiles(lat []time.Duration) (p50, p99 time.Duration) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return lat[(len(lat)-1)*50/100], lat[(len(lat)-1)*99/100]
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
