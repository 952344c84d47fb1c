// Package limit caps how many calls are in flight at once: a semaphore
// around outbound calls, and above it a bounded queue or shed load
// (docs/why.md, section 1: one retry's blast radius on a shared worker pool).
//
// A retry schedule is service time: a call that sleeps through its backoff
// holds a worker all the while, and by Little's law the workers it needs are
// its arrival rate times that time. A Limiter bounds the product. Callers
// beyond its Capacity wait in a bounded queue, ordered by priority (interactive
// first) and FIFO within a priority, for at most MaxWait, and
// callers beyond the queue are shed at once with ErrFull, so overload turns
// into fast, visible errors instead of a queue that grows until upstream
// timeouts fire and their re-sends feed it.
//
// A Group shares one pool among keys (endpoints) and caps each key's share,
// because "separate code is not separate capacity" (docs/why.md,
// section 1): an endpoint stuck in a retry loop is shed with ErrKeyFull
// at its PerKey cap while the other endpoints still get slots.
//
// # Usage
//
//	lim, err := limit.New(limit.Config{Capacity: 24, MaxQueue: 48, MaxWait: 2 * time.Second})
//	if err != nil {
//		return err // a *ConfigError: a field out of range
//	}
//
//	if err := lim.Acquire(ctx); err != nil {
//		return err // ErrFull, ErrQueueTimeout or context.Cause(ctx)
//	}
//	defer lim.Release()
//	// ... the outbound call ...
//
// With a Group the key is passed to each call:
//
//	g := limit.Must(limit.NewGroup(limit.GroupConfig{Capacity: 24, PerKey: 8}))
//	if err := g.Acquire(ctx, "/v1/draft"); err != nil {
//		return err // also ErrKeyFull
//	}
//	defer g.Release("/v1/draft")
//
// An Adaptive limiter has the same guarantees, but its capacity is a
// limit it measures rather than a number you chose: AIMD on overload
// signals (429, 503, 529, timeouts) and a gradient over a windowed minimum
// latency move it between Min and Max, and its queue is ordered by
// priority, so interactive attempts go first and a background retry is
// shed first. Time and latency are arguments (ReleaseAt), so it runs on
// virtual time. See docs/adaptive.md, and when a fixed Capacity is the
// better choice.
//
//	a := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Min: 2, Max: 200}))
//	p := &recoil.Policy{Limiter: a} // the loop calls ReleaseAt with each attempt's latency
//
// Errors are sentinels; test them with errors.Is. ErrKeyFull matches ErrFull
// as well. New and NewGroup return an error for a configuration out of range
// (a *ConfigError wrapping ErrConfig, listing the field); Must turns it into
// a panic where the configuration is a literal. The one other panic is a
// programming error: releasing a slot that is not held, as for
// golang.org/x/sync/semaphore.
package limit
