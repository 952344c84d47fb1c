package sim

// read: the read of a record arrives and sees the version.
func (w *world) read(ji int32) {
	j := w.jobs.get(ji)
	n := &w.nodes[j.node]
	w.arrive(n, j)
	if len(n.outages) > 0 {
		if o := w.outage(n, false); o != nil && (o.failure >= 1 || w.rnd.Float64() < o.failure) {
			j.res = o.res
			w.refuse(n, ji, j)
			return
		}
	}
	j.ver = n.version
	w.schedule(w.now+n.latency.draw(w.rnd)+n.latency.draw(w.rnd), evWrite, ji, 0)
}

// write: the conditional write arrives; it succeeds if the version is the
// one read.
func (w *world) write(ji int32) {
	j := w.jobs.get(ji)
	n := &w.nodes[j.node]
	if j.counted {
		n.m.writes++
	}
	if n.version == j.ver {
		n.version++
		j.res = resOK
	} else {
		j.res = resConflict
	}
	if j.counted {
		n.m.res[j.res]++
	}
	if j.res == resOK {
		n.m.iOK++
	}
	w.answer(ji, n.latency.draw(w.rnd))
}
