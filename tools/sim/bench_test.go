package sim

import (
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/scenarios"
)

// benchSizes are the in-flight sizes measured: the gateway-outage
// scenario at 10,000 and 100,000 callers, and a heap of as many events.
var benchSizes = []int{10_000, 100_000}

func gatewayAt(tb testing.TB, callers int) *Scenario {
	tb.Helper()
	data, err := scenarios.FS.ReadFile("gateway-outage.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	s, err := Parse("gateway-outage.yaml", data)
	if err != nil {
		tb.Fatal(err)
	}
	s.Sweep.Values = []string{strconv.Itoa(callers)}
	sc, err := s.at(s.Sweep.Values[0])
	if err != nil {
		tb.Fatal(err)
	}
	return sc
}

// BenchmarkSimEvents runs the gateway-outage scenario with every
// caller a real recoil.Call under each of the scenario's three policies, and
// reports the cost per event and events per second. pending/event is the
// mean number of events in the queue when one is taken: about the number of
// callers, since each has one event pending (its attempt's reply or its wait).
func BenchmarkSimEvents(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("callers="+strconv.Itoa(n), func(b *testing.B) {
			s := gatewayAt(b, n)
			b.ReportAllocs()
			var events, pending uint64
			for b.Loop() {
				for i := range s.Policies {
					w := newWorld(s, &s.Policies[i], 1, DefaultWindow)
					w.run()
					events += w.events
					pending += w.pendingSum
					w.recycle() // as Run does: the next world reuses the memory
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(pending)/float64(events), "pending/event")
		})
	}
}

// binaryHeap is the baseline: a textbook typed binary min-heap of the same
// 16-byte events, no interfaces.
type binaryHeap []event

func (h *binaryHeap) push(e event) {
	s := append(*h, e)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].at <= e.at {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = e
	*h = s
}

func (h *binaryHeap) pop() event {
	s := *h
	top := s[0]
	n := len(s) - 1
	e := s[n]
	s = s[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s[c+1].at < s[c].at {
			c++
		}
		if s[c].at >= e.at {
			break
		}
		s[i] = s[c]
		i = c
	}
	if n > 0 {
		s[i] = e
	}
	*h = s
	return top
}

// BenchmarkHeapBaseline is the physical limit the simulator is held to: a
// bare loop over a typed binary heap holding n events, each pop followed by
// one push of an event a random time later (the "hold" model). The
// simulator's ns/event divided by this one's is the ratio
// docs/benchmarks.md reports (target: 1.3).
func BenchmarkHeapBaseline(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			var h binaryHeap
			next := holdTimes()
			for i := range n {
				h.push(event{at: next(), id: uint32(i)})
			}
			b.ReportAllocs()
			var events uint64
			for b.Loop() {
				e := h.pop()
				e.at += next()
				h.push(e)
				events++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkQueueHold is the same hold loop on the simulator's own queue (a
// radix heap), for comparison with the baseline.
func BenchmarkQueueHold(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			var q queue
			next := holdTimes()
			for i := range n {
				q.push(event{at: next(), id: uint32(i)})
			}
			var events uint64
			for b.Loop() {
				e := q.min()
				q.pop()
				e.at += next()
				q.push(e)
				events++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
		})
	}
}

// BenchmarkSimVsHeap measures the ratio BenchmarkSimEvents and
// BenchmarkHeapBaseline are compared by, interleaved: each iteration runs
// the three gateway-outage worlds, then the baseline's hold loop on a heap
// of as many events for as many events as the worlds handled, and times
// each. On a machine shared with other work the two benchmarks, minutes
// apart, meet different loads; here both halves of every ratio meet the
// same. It reports the median over iterations of each half's ns/event and
// of their ratio; where the thread's CPU time can be read (Linux), also
// the median ratio of the two halves' CPU times (cpu-ratio), which leaves
// out the time either half waited for a CPU. On a 2-vCPU guest shared with
// other work (load average 4 to 6) both ratios came to about 3.0 at 10,000
// callers and 2.5 at 100,000, and ran 2.8–3.3 and 2.4–2.8 over three runs
// of the same build; docs/benchmarks.md has the figures.
func BenchmarkSimVsHeap(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("callers="+strconv.Itoa(n), func(b *testing.B) {
			runtime.LockOSThread() // threadCPU reads this thread's clock
			defer runtime.UnlockOSThread()
			s := gatewayAt(b, n)
			var h binaryHeap
			next := holdTimes()
			for i := range n {
				h.push(event{at: next(), id: uint32(i)})
			}
			var sims, heaps, ratios, cpuRatios []float64
			for b.Loop() {
				c0, cpuOK := threadCPU()
				t0 := time.Now()
				var events uint64
				for i := range s.Policies {
					w := newWorld(s, &s.Policies[i], 1, DefaultWindow)
					w.run()
					events += w.events
					w.recycle()
				}
				t1 := time.Now()
				c1, _ := threadCPU()
				for range events {
					e := h.pop()
					e.at += next()
					h.push(e)
				}
				t2 := time.Now()
				c2, _ := threadCPU()
				if cpuOK && c2 > c1 {
					cpuRatios = append(cpuRatios, float64(c1-c0)/float64(c2-c1))
				}
				sim := float64(t1.Sub(t0).Nanoseconds()) / float64(events)
				heap := float64(t2.Sub(t1).Nanoseconds()) / float64(events)
				sims, heaps, ratios = append(sims, sim), append(heaps, heap), append(ratios, sim/heap)
			}
			median := func(v []float64) float64 {
				slices.Sort(v)
				return v[len(v)/2]
			}
			b.ReportMetric(median(sims), "sim-ns/event")
			b.ReportMetric(median(heaps), "heap-ns/event")
			b.ReportMetric(median(ratios), "ratio")
			if len(cpuRatios) > 0 {
				b.ReportMetric(median(cpuRatios), "cpu-ratio")
			}
		})
	}
}

// holdTimes returns the hold loop's source of event times and delays, the
// same in every benchmark that uses it: xorshift64, cheap and
// deterministic, each value up to about 1 ms in nanoseconds.
func holdTimes() func() int64 {
	x := uint64(0x9e3779b97f4a7c15)
	return func() int64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int64(x >> 44)
	}
}
