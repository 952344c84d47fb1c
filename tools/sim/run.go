package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/recoil-go/recoil"
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
	type key struct {
		ps  *PolicySpec
		tmo time.Duration
	}
	compiled := map[key]*policy{}
	def := &PolicySpec{Name: "default"}
	pick := func(ref PolicyRef, tmo time.Duration) *policy {
		ps := ref.Spec
		if ps == nil {
			ps = cmp
		}
		if ps == nil {
			ps = def
		}
		k := key{ps, tmo}
		if p, ok := compiled[k]; ok {
			return p
		}
		p := compile(ps)
		p.brooker = s.Schedules == SchedulesBrooker2015
		if tmo > 0 {
			p.attemptTimeout = tmo
		}
		compiled[k] = p
		return p
	}
	var endpoints []string
	epIndex := map[string]uint16{}
	for i := range s.Clients {
		e := s.Clients[i].endpoint()
		if _, ok := epIndex[e]; !ok {
			epIndex[e] = uint16(len(endpoints))
			endpoints = append(endpoints, e)
		}
	}
	svc := map[string]int32{}
	for i := range s.Services {
		svc[s.Services[i].Name] = int32(i)
	}
	w.nodes = make([]node, len(s.Services))
	for i := range s.Services {
		ss := &s.Services[i]
		n := &w.nodes[i]
		n.spec = ss
		n.record = ss.Kind == KindRecord
		n.workers = ss.Workers
		switch {
		case ss.Queue == 0:
			n.qmax = -1
		case ss.Queue < 0:
			n.qmax = 0
		default:
			n.qmax = ss.Queue
		}
		n.service, n.latency, n.failTime = ss.Service.sampler(), ss.Latency.sampler(), ss.FailTime.sampler()
		n.rejectT = ss.RejectTime.sampler()
		n.failure = ss.Failure
		n.cancel = ss.CancelOnAbandon
		if len(ss.Reject) > 0 {
			n.reject = make([]bool, len(endpoints))
			for _, e := range ss.Reject {
				n.reject[epIndex[e]] = true
			}
		}
		if ss.Allowance > 0 {
			n.allowance = int64(math.Round(ss.Allowance.PerMinute()))
		}
		n.minute = -1
		for _, o := range ss.Outages {
			st := outageState{start: int64(o.Start), end: int64(o.Start + o.Duration), failure: o.Failure, class: recoil.ClassTransient}
			if st.failure == 0 {
				st.failure = 1
			}
			switch o.Class {
			case "overloaded":
				st.class = recoil.ClassOverloaded
			case "drop":
				st.drop = true
			case "slow":
				st.slow, st.service = true, o.Service.sampler()
				n.slowing = true
			}
			st.recoverBelow = float64(o.RecoverBelow) * window.Seconds()
			n.outages = append(n.outages, st)
		}
		n.down = -1
		if ss.Calls != "" {
			n.down = svc[ss.Calls]
			n.pol = pick(ss.Policy, ss.AttemptTimeout)
			n.rp = n.pol.newPolicy(w.prnd)
		}
		n.m.epArr = make([]int64, len(endpoints))
		n.m.epThr = make([]int64, len(endpoints))
	}
	w.clients = make([]client, len(s.Clients))
	for i := range s.Clients {
		cs := &s.Clients[i]
		cl := &w.clients[i]
		cl.spec = cs
		cl.ep = epIndex[cs.endpoint()]
		cl.target = svc[cs.Target]
		cl.rnd = rand.New(rand.NewPCG(seed, streamClients+uint64(i)))
		cl.pol = pick(cs.Policy, cs.AttemptTimeout)
		cl.start, cl.think, cl.resubmit = cs.Start.sampler(), cs.Think.sampler(), cs.Resubmit.sampler()
		if cs.Serial != nil {
			cl.serial = &serial{time: cs.Serial.Time.sampler()}
		}
		if cs.Rate > 0 || cs.SharedPolicy || cl.pol.spec.stateless() {
			cl.rps = cl.pol.newReplicas(cs.replicas(), w.prnd)
			cl.rp = cl.rps[0]
		}
		if cs.Rate > 0 {
			cl.perNs = float64(cs.Rate) / 1e9
			w.schedule(int64(cl.rnd.ExpFloat64()/cl.perNs), evArrival, int32(i), 0)
			continue
		}
		for k := range cs.Callers {
			rp := cl.rp
			if len(cl.rps) > 1 {
				rp = cl.rps[k%len(cl.rps)] // callers spread over the replicas
			}
			ci := w.newCall(-1, int32(i), cl.target, cl.pol, rp, cl.ep)
			c := w.calls.get(ci)
			if c.rp == nil {
				cl.pol.build(&c.own, w.prnd)
				c.rp = &c.own
				w.callBytes = unsafe.Sizeof(call{})
			}
			c.closed = true
			if s.JitterSource != nil {
				c.jit = rand.New(s.JitterSource(seed, k))
			}
			if cs.Calls > 0 {
				c.left = int32(cs.Calls)
			}
			w.schedule(cl.start.draw(cl.rnd), evBegin, ci, 0)
		}
	}
	w.schedule(w.sample, evSample, 0, 0)
	w.endpoints = endpoints
	w.target = targetOf(s)
	return w
}

// result collects the run's figures.
func (w *world) collect() RunResult {
	end := w.now
	span := float64(end-w.warm) / 1e9
	r := RunResult{End: time.Duration(end), Events: w.events}
	var all hist.Hist
	for i := range w.clients {
		cl := &w.clients[i]
		cr := ClientResult{
			Name: cl.spec.Name, Endpoint: w.endpoints[cl.ep],
			Calls: cl.calls, Succeeded: cl.ok, Failed: cl.failed, Unfinished: cl.calls - cl.ok - cl.failed,
			Attempts: cl.attempts, Throttled: cl.throttled, Resubmitted: cl.resubmits, Latency: percentiles(&cl.lat),
		}
		if span > 0 {
			cr.Goodput = float64(cl.ok) / span
		}
		for reason, k := range cl.reasons {
			if k > 0 {
				if cr.FailedBy == nil {
					cr.FailedBy = map[string]int64{}
				}
				cr.FailedBy[recoil.Reason(reason).String()] += k
			}
		}
		r.Calls += cr.Calls
		r.Succeeded += cr.Succeeded
		r.Failed += cr.Failed
		r.Unfinished += cr.Unfinished
		r.Resubmitted += cr.Resubmitted
		r.Goodput += cr.Goodput
		all.Merge(&cl.lat)
		r.Clients = append(r.Clients, cr)
	}
	r.Latency = percentiles(&all)
	for i := range w.nodes {
		n := &w.nodes[i]
		m := &n.m
		m.busy.update(end, w.warm, n.busy)
		m.queue.update(end, w.warm, n.q.size)
		sr := ServiceResult{
			Name: n.spec.Name, Workers: n.workers,
			Arrivals: m.arrivals, Served: m.served, Writes: m.writes, Succeeded: m.res[resOK],
			Throttled: m.res[resThrottled], Abandoned: m.abandoned, Peak: n.peak, PeakAt: time.Duration(n.peakAt),
			MaxQueue: m.maxQueue, Wait: percentiles(&m.wait), Series: m.series,
		}
		if span > 0 {
			sr.MeanBusy = m.busy.area / float64(end-w.warm)
			sr.MeanQueue = m.queue.area / float64(end-w.warm)
		}
		for res, k := range m.res {
			if k > 0 && res != int(resOK) {
				if sr.Failures == nil {
					sr.Failures = map[string]int64{}
				}
				sr.Failures[resNames[res]] += k
			}
		}
		for ep, k := range m.epArr {
			if k > 0 {
				if sr.ArrivalsBy == nil {
					sr.ArrivalsBy = map[string]int64{}
				}
				sr.ArrivalsBy[w.endpoints[ep]] = k
			}
			if t := m.epThr[ep]; t > 0 {
				if sr.ThrottledBy == nil {
					sr.ThrottledBy = map[string]int64{}
				}
				sr.ThrottledBy[w.endpoints[ep]] = t
			}
		}
		for _, o := range n.outages {
			or := OutageResult{Start: time.Duration(o.start), End: time.Duration(o.end), Recovered: o.recovered, RecoveredAt: time.Duration(o.recoveredAt)}
			if !o.recovered && end >= o.end && o.recoverBelow == 0 {
				or.Recovered, or.RecoveredAt = true, time.Duration(o.end)
			}
			sr.Outages = append(sr.Outages, or)
		}
		r.Services = append(r.Services, sr)
	}
	t := &r.Services[w.target]
	r.Attempts, r.Peak = t.Arrivals, t.Peak
	return r
}

// percentiles summarises the durations h counted.
func percentiles(h *hist.Hist) Percentiles {
	return Percentiles{Count: h.Count(), Mean: h.Mean(), P50: h.Quantile(0.5), P90: h.Quantile(0.9), P99: h.Quantile(0.99), Max: h.Max()}
}
