package sim

import (
	"time"
)

// level integrates a quantity over time, for its time average.
type level struct {
	last int64
	area float64
}

func (l *level) update(now, warm int64, cur int) {
	if from := max(l.last, warm); now > from {
		l.area += float64(cur) * float64(now-from)
	}
	l.last = max(l.last, now)
}

// maxSamples bounds a time series: past it, neighbouring samples merge.
const maxSamples = 4096

func (w *world) takeSample() {
	now := w.now
	for i := range w.nodes {
		n := &w.nodes[i]
		m := &n.m
		dt := w.sample
		if k := len(m.series); k > 0 {
			dt = now - int64(m.series[k-1].T)
		}
		m.series = append(m.series, Sample{T: time.Duration(now), Dt: time.Duration(dt), Arrivals: m.iArr, Throttled: m.iThr, Succeeded: m.iOK, Delivered: m.iDone, Queue: n.q.size, Busy: n.busy})
		m.iArr, m.iThr, m.iOK, m.iDone = 0, 0, 0, 0
		if len(m.series) >= maxSamples {
			m.series = decimate(m.series)
		}
	}
	if len(w.nodes) > 0 && len(w.nodes[0].m.series) == maxSamples/2 {
		w.sample *= 2 // the series was decimated: sample half as often from now on
	}
	if w.q.n > 0 { // something else is pending
		w.schedule(now+w.sample, evSample, 0, 0)
	}
}

// decimate merges neighbouring samples: sums add, levels keep the later.
func decimate(s []Sample) []Sample {
	out := s[:0]
	for i := 0; i+1 < len(s); i += 2 {
		a, b := s[i], s[i+1]
		out = append(out, Sample{T: b.T, Dt: a.Dt + b.Dt, Arrivals: a.Arrivals + b.Arrivals, Throttled: a.Throttled + b.Throttled, Succeeded: a.Succeeded + b.Succeeded, Delivered: a.Delivered + b.Delivered, Queue: b.Queue, Busy: b.Busy})
	}
	if len(s)%2 == 1 {
		out = append(out, s[len(s)-1])
	}
	return out
}
