package sim

import (
	"context"
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/recoil-go/recoil/tools/internal/hist"
)

// DefaultWindow is the width of the peak window: the receiving side counts
// "how many of those landed inside the same 200 milliseconds" (docs/why.md,
// section 6).
const DefaultWindow = 200 * time.Millisecond

// defaultDuration bounds a run whose scenario gives no duration.
const defaultDuration = time.Hour

// Options adjust a run. The zero value runs the scenario as written.
type Options struct {
	// Seed seeds the random source; zero means the scenario's seed, or 1.
	// Every run of a scenario uses the same seed, so compared policies meet
	// the same arrivals (common random numbers).
	Seed uint64
	// Window overrides the scenario's peak window.
	Window time.Duration
	// Progress, if set, is called now and then with the share of the work
	// done, in [0, 1]. It runs on the simulating goroutine.
	Progress func(done float64)
}

// Run simulates every run of the scenario — each sweep value under each
// compared policy — and returns the results. If ctx is cancelled it stops
// early (ctx is checked between runs and every few thousand events) and
// returns the context's cause with a Result that holds the runs it
// finished, in order; the run it was in is left out.
func Run(ctx context.Context, s *Scenario, o Options) (*Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	seed := o.Seed
	if seed == 0 {
		seed = s.Seed
	}
	if seed == 0 {
		seed = 1
	}
	window := o.Window
	if window <= 0 {
		window = s.Window
	}
	if window <= 0 {
		window = DefaultWindow
	}
	res := &Result{Scenario: s.Name, Description: s.Description, Seed: seed, Window: window}
	points := []string{""}
	if s.Sweep != nil {
		res.SweepPath = s.Sweep.Path
		points = s.Sweep.points()
	}
	policies := make([]*PolicySpec, 0, len(s.Policies))
	for i := range s.Policies {
		policies = append(policies, &s.Policies[i])
	}
	if len(policies) == 0 {
		policies = append(policies, nil)
	}
	total := float64(len(points) * len(policies))
	k := 0
	for _, x := range points {
		sc := s
		if s.Sweep != nil {
			var err error
			if sc, err = s.at(x); err != nil {
				return nil, err
			}
		}
		for _, ps := range policies {
			if err := context.Cause(ctx); err != nil {
				return res, err
			}
			w := newWorld(sc, ps, seed, window)
			if o.Progress != nil || ctx.Done() != nil {
				base := float64(k)
				w.progress = func(f float64) {
					if o.Progress != nil {
						o.Progress((base + min(f, 1)) / total)
					}
					if ctx.Err() != nil {
						w.until = w.now // stop at once
					}
				}
			}
			w.run()
			if err := context.Cause(ctx); err != nil {
				return res, err
			}
			r := w.collect()
			w.recycle()
			if ps != nil {
				r.Policy = ps.Name
			}
			r.SweepValue = x
			res.Target = sc.Services[targetOf(sc)].Name
			res.Runs = append(res.Runs, r)
			k++
			if o.Progress != nil {
				o.Progress(float64(k) / total)
			}
		}
	}
	return res, nil
}

func targetOf(s *Scenario) int {
	for i := range s.Services {
		if s.Services[i].Name == s.Target {
			return i
		}
	}
	return len(s.Services) - 1
}

// Streams of the run's PCG source, one seed: services, policies, and one per
// client, so a client's arrivals do not depend on what the policies drew.
const (
	streamServices = 0x5e41ce5
	streamPolicies = 0x7011c1e5
	streamClients  = 1 << 32
)

func newWorld(s *Scenario, cmp *PolicySpec, seed uint64, window time.Duration) *world {
	dur := s.Duration
	if dur <= 0 {
		dur = defaultDuration
	}
	w := &world{
		until:  int64(dur),
		warm:   int64(s.Warmup),
		window: int64(window),
		rnd:    rand.New(rand.NewPCG(seed, streamServices)),
		prnd:   rand.New(rand.NewPCG(seed, streamPolicies)),
	}
	if s.JitterSource != nil {
		w.prnd = rand.New(s.JitterSource(seed, -1))
	}
	w.takeScratch()
	w.callBytes = unsafe.Offsetof(call{}.own)
	w.sample = int64(s.Sample)
	if w.sample <= 0 {
		w.sample = max(int64(window), int64(dur)/2000)
		if s.Duration <= 0 {
			w.sample = int64(window)
		}
	}
	b := &builder{s: s, pols: newPolicies(s, cmp), seed: seed, window: window, epIndex: map[string]uint16{}, svc: map[string]int32{}}
	for i := range s.Clients {
		e := s.Clients[i].endpoint()
		if _, ok := b.epIndex[e]; !ok {
			b.epIndex[e] = uint16(len(b.endpoints))
			b.endpoints = append(b.endpoints, e)
		}
	}
	for i := range s.Services {
		b.svc[s.Services[i].Name] = int32(i)
	}
	w.nodes = make([]node, len(s.Services))
	for i := range s.Services {
		w.buildNode(b, &w.nodes[i], &s.Services[i])
	}
	w.clients = make([]client, len(s.Clients))
	for i := range s.Clients {
		w.buildClient(b, int32(i))
	}
	w.schedule(w.sample, evSample, 0, 0)
	w.endpoints = b.endpoints
	w.target = targetOf(s)
	return w
}

// builder is what newWorld builds the services and clients of a scenario
// with.
type builder struct {
	s         *Scenario
	pols      *policies
	seed      uint64
	window    time.Duration
	endpoints []string          // the clients' endpoints, each once
	epIndex   map[string]uint16 // an endpoint's index in endpoints
	svc       map[string]int32  // a service's index by name
}

// collect collects the run's figures.
func (w *world) collect() RunResult {
	end := w.now
	span := float64(end-w.warm) / 1e9
	r := RunResult{End: time.Duration(end), Events: w.events}
	var all hist.Hist
	for i := range w.clients {
		cr := w.clientResult(&w.clients[i], span)
		r.Calls += cr.Calls
		r.Succeeded += cr.Succeeded
		r.Failed += cr.Failed
		r.Unfinished += cr.Unfinished
		r.Resubmitted += cr.Resubmitted
		r.Goodput += cr.Goodput
		all.Merge(&w.clients[i].lat)
		r.Clients = append(r.Clients, cr)
	}
	r.Latency = percentiles(&all)
	for i := range w.nodes {
		r.Services = append(r.Services, w.serviceResult(&w.nodes[i], end))
	}
	t := &r.Services[w.target]
	r.Attempts, r.Peak = t.Arrivals, t.Peak
	return r
}

// percentiles summarises the durations h counted.
func percentiles(h *hist.Hist) Percentiles {
	return Percentiles{Count: h.Count(), Mean: h.Mean(), P50: h.Quantile(0.5), P90: h.Quantile(0.9), P99: h.Quantile(0.99), Max: h.Max()}
}
