package sim

import "sync"

// scratch is the memory a finished run leaves behind, kept for the next
// one: the chunks of its call and job slabs, cleared, and the buckets of
// its event queue, emptied. A sweep or a comparison of policies runs world
// after world of the same size; taking the memory back saves each one
// allocating, faulting in and zeroing megabytes (a call is over 500 bytes,
// and 100,000 callers hold a call each) and the collections that follow.
// Nothing a run computes depends on where its memory came from.
type scratch struct {
	calls   []*[chunkSize]call
	jobs    []*[chunkSize]job
	buckets [64][]event
	spare   []event   // the queue's sort's spare buffer
	runs    [][]event // and its runs' buffers, emptied
}

var scratchPool sync.Pool // of *scratch

// takeScratch gives w the memory of an earlier run, if one is kept.
func (w *world) takeScratch() {
	s, _ := scratchPool.Get().(*scratch)
	if s == nil {
		return
	}
	// A slab appends a chunk only when its count reaches the chunks it
	// has, so chunks given to an empty slab are used first, in order.
	w.calls.chunks, w.jobs.chunks, w.q.b = s.calls, s.jobs, s.buckets
	w.q.spare, w.q.free = s.spare, s.runs
}

// recycle keeps w's memory for the next run; w must not be used after.
func (w *world) recycle() {
	s := &scratch{calls: reclaim(&w.calls), jobs: reclaim(&w.jobs)}
	for i, b := range w.q.b {
		s.buckets[i] = b[:0]
	}
	s.spare, s.runs = w.q.spare[:0], w.q.free
	for _, r := range w.q.runs[:w.q.nr] {
		s.runs = append(s.runs, r[:0])
	}
	w.q = queue{}
	scratchPool.Put(s)
}

// reclaim clears the slots s used and returns its chunks, leaving s empty.
func reclaim[T any](s *slab[T]) []*[chunkSize]T {
	chunks := s.chunks
	for i, c := range chunks {
		used := int(s.n) - i<<chunkBits
		if used <= 0 {
			break
		}
		clear(c[:min(used, len(c))])
	}
	*s = slab[T]{}
	return chunks
}
