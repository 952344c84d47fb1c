package openloop

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestSpreadOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want Spread[float64]
	}{
		{"empty", nil, Spread[float64]{}},
		{"one", []float64{3}, Spread[float64]{Median: 3, Q1: 3, Q3: 3, Lo: 3, Hi: 3, N: 1}},
		{"five, unsorted", []float64{5, 1, 4, 2, 3}, Spread[float64]{Median: 3, Q1: 2, Q3: 4, Lo: 1, Hi: 5, N: 5}},
		// k = ⌊(30 − 1.96·√30)/2⌋ = 9: the 10th and 21st of 30.
		{"thirty", seq(30), Spread[float64]{Median: 14, Q1: 7, Q3: 21, Lo: 9, Hi: 20, N: 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := spreadOf(tc.in); got != tc.want {
				t.Errorf("spreadOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func seq(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(n - 1 - i)
	}
	return v
}

// counting is a server that answers 200 and counts its calls.
func counting(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestMixedSendsEachCallToOneServerByTheSeededCoin(t *testing.T) {
	a, na := counting(t)
	b, nb := counting(t)
	urls := []string{a.URL, b.URL}
	mix := Mixed(context.Background(), Client(), urls, `{}`, 400, 50*time.Millisecond, 4, 7)
	perSlice, all := mix.Slices(), mix.All()
	if len(perSlice) != 4 || len(all) != 2 {
		t.Fatalf("%d slices, %d servers; want 4, 2", len(perSlice), len(all))
	}
	if all[0].Calls+all[1].Calls != 80 || int(na.Load()) != all[0].Calls || int(nb.Load()) != all[1].Calls {
		t.Errorf("calls %d + %d, served %d + %d; want 80 in all, as served", all[0].Calls, all[1].Calls, na.Load(), nb.Load())
	}
	for s, sl := range perSlice {
		if sl[0].Calls+sl[1].Calls != 20 || sl[0].OK != sl[0].Calls || sl[1].OK != sl[1].Calls {
			t.Errorf("slice %d: %+v; want 20 calls, all answered", s, sl)
		}
	}
	again := Mixed(context.Background(), Client(), urls, `{}`, 400, 50*time.Millisecond, 4, 7).Slices()
	for s := range perSlice {
		if again[s][0].Calls != perSlice[s][0].Calls {
			t.Errorf("slice %d: %d calls to the first server, then %d with the same seed", s, perSlice[s][0].Calls, again[s][0].Calls)
		}
	}
}

func TestAlternateRunsEachServerAloneEachRound(t *testing.T) {
	a, na := counting(t)
	b, nb := counting(t)
	rounds := Alternate(context.Background(), Client(), []string{a.URL, b.URL}, `{}`, 200, 50*time.Millisecond, 3, 1)
	if len(rounds) != 3 {
		t.Fatalf("%d rounds, want 3", len(rounds))
	}
	for i, r := range rounds {
		for s, res := range r {
			if res.Calls != 10 || res.OK != 10 {
				t.Errorf("round %d, server %d: %d calls, %d answered; want 10, 10", i, s, res.Calls, res.OK)
			}
		}
	}
	if na.Load() != 30 || nb.Load() != 30 {
		t.Errorf("served %d and %d, want 30 each", na.Load(), nb.Load())
	}
}

func TestAddedBoundsTheDifference(t *testing.T) {
	ms := time.Millisecond
	// Server 1 answers 2 ms later than server 0 in every slice, while the
	// machine's own delay moves from slice to slice.
	m := &Mix{k: 2}
	for s := range 10 {
		base := time.Duration(s) * ms
		m.lat = append(m.lat, [][]time.Duration{
			{base + 1*ms, base + 2*ms, base + 3*ms, -1},
			{base + 3*ms, base + 4*ms, base + 5*ms},
		})
	}
	got := m.Added(1, 0.5, 200, 1)
	if got.N != 10 || got.Median <= 0 || got.Lo > got.Median || got.Hi < got.Median {
		t.Errorf("Added = %+v; want a positive difference inside its interval over 10 slices", got)
	}
	if all := m.All(); all[0].Calls != 40 || all[0].OK != 30 || all[1].OK != 30 {
		t.Errorf("All = %+v; want 40 calls to the first, 30 answered by each", all)
	}
}

func TestTwinsPairsEveryCall(t *testing.T) {
	a, na := counting(t)
	b, nb := counting(t)
	firstA, firstB := Twins(context.Background(), Client(), [2]string{a.URL, b.URL}, `{}`, 400, 50*time.Millisecond, 1)
	if len(firstA)+len(firstB) != 10 || na.Load() != 10 || nb.Load() != 10 {
		t.Errorf("%d pairs, served %d and %d; want 10 pairs, 10 calls each", len(firstA)+len(firstB), na.Load(), nb.Load())
	}
}

func TestTwinSpreadCancelsTheHeadStart(t *testing.T) {
	us := time.Microsecond
	// The second server adds 5 µs; whichever call starts first gains 100.
	firstA := []time.Duration{105 * us, 100 * us, 110 * us}
	firstB := []time.Duration{-95 * us, -90 * us, -100 * us}
	if got := TwinSpread(firstA, firstB); got.Median != 5*us || got.N != 6 {
		t.Errorf("TwinSpread = %+v; want a median of 5µs over 6 pairs", got)
	}
}

func TestPairsAdded(t *testing.T) {
	us := time.Microsecond
	// 20 blocks of 100 pairs: the second server's calls take 50 µs more
	// than their twins; two pairs in fifty (one of each order) met a slow
	// moment (10 ms) that delayed both calls of it alike, so each
	// server's p99 is one of those: the difference is still the 50 µs.
	for _, tc := range []struct {
		name  string
		extra time.Duration
		want  time.Duration
	}{{"none added", 0, 0}, {"50µs added", 50 * us, 50 * us}} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Pairs{PerSlice: 100}
			for i := range 2000 {
				base := time.Duration(700+i%37) * us
				if i%50 == 7 || i%50 == 8 {
					base += 10 * time.Millisecond
				}
				lat := [2]time.Duration{base, base + tc.extra}
				if i%2 == 1 { // the head start: whichever started first gains 100 µs
					lat[0] += 100 * us
				} else {
					lat[1] += 100 * us
				}
				p.Lat, p.First = append(p.Lat, lat), append(p.First, i%2)
			}
			p.Lat[3][1] = -1 // a call not answered: its pair is left out
			got := p.Added(0.99, 200, 1)
			if got.N != 20 || got.Lo > got.Median || got.Hi < got.Median {
				t.Fatalf("Added = %+v; want 20 blocks, the median inside its interval", got)
			}
			if d := got.Median - tc.want; d < -5*us || d > 5*us {
				t.Errorf("Added median = %v; want %v ± 5µs", got.Median, tc.want)
			}
		})
	}
}
