package retryloop

import (
	"fmt"
	"strings"
)

// reportRetryAfter reports a retry loop that goes round on a 429 or a 503
// and reads no Retry-After anywhere it can see.
func (c *checker) reportRetryAfter(sc loopScan, v verdict) {
	if sc.readsRA || (v.retried[429] != triT && v.retried[503] != triT) {
		return
	}
	var which []string
	for _, st := range []int{429, 503} {
		if v.retried[st] == triT {
			which = append(which, fmt.Sprint(st))
		}
	}
	c.addRetryAfter(sc.waits[0], which)
}

// pollRetryAfter reports a poll over HTTP (it goes round on a success:
// authorization_pending) whose wait reached only on a failure is reached
// on a 429 or a 503 while nothing reads Retry-After: that wait is a
// retry's, and the server may have said how long.
func (c *checker) pollRetryAfter(w *loopWalker, sc loopScan, fw []loopCall) {
	if sc.readsRA || sc.remote != remoteHTTP {
		return
	}
	for _, lw := range fw {
		var which []string
		for _, st := range []int{429, 503} {
			if w.reaches(w.at[lw.call], sc.remote, outcome{hasStatus: true, status: st}) == triT {
				which = append(which, fmt.Sprint(st))
			}
		}
		if len(which) > 0 {
			c.addRetryAfter(lw, which)
			return
		}
	}
}

// addRetryAfter reports lw, the wait of a loop that retries the statuses
// which names without reading Retry-After.
func (c *checker) addRetryAfter(lw loopCall, which []string) {
	c.add(finding{check: CheckRetryAfter, pos: lw.call.Pos(), end: lw.call.End(),
		msg: fmt.Sprintf("retry loop retries %s without reading Retry-After: the server said when to come back; read it (recoilhttp.ServerWait) or use recoilhttp.Transport", strings.Join(which, " and "))})
}
