package retryloop

import "go/ast"

// A retry loop with no wait at all re-sends a failed request at once:
//
//	retry:
//		resp, err := c.http.Do(req)
//		if isTemporary(err) {
//			goto retry
//		}
//
// There is no wait to judge for jitter or for the caller's context, but
// with nothing to count the attempts or run out the clock, a dependency
// that keeps failing is asked again as fast as it answers, for ever.

// hotRetry reports a loop that has no wait, re-sends an HTTP request on
// some failure, leaves on success, and has no bound; and one that sends a
// 429 or 503 again at once without reading Retry-After. Only an HTTP call is
// judged: a loop of other calls with no wait is far more often a read, a
// scan or a drain than a retry; and, as for a loop that waits, not one
// that asks a server this process started or one on this host.
func (c *checker) hotRetry(s ast.Stmt, label *ast.Ident, fc funcCtx, sc loopScan) {
	if sc.remote != remoteHTTP || c.pollsOwnServer(s, fc) {
		return
	}
	w, v := c.walkLoop(s, label, fc, sc, nil)
	if !v.anyFailure || !v.leavesOnSuccess || c.redials(sc.body) || reauthOnly(v) {
		return // a request re-signed once on a 401 is not a retry
	}
	if !c.bounded(s, w, sc.remote) {
		c.reportUnbounded(s, fc)
	}
	if !c.overElements(s) {
		// A 429 or 503 asked again at once, the server's Retry-After
		// unread: the storm at its fastest. (A range over mirrors or
		// URLs sends each request once: a failover, not a retry.)
		c.reportRetryAfter(sc, v)
	}
}
