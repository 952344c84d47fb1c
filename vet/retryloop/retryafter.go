package retryloop

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"strconv"
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
// authorization_pending), or around a call that folds the answer's status
// into its error, whose wait reached only on a failure is reached on a 429
// or a 503 while nothing reads Retry-After: that wait is a retry's, and
// the server may have said how long.
func (c *checker) pollRetryAfter(w *loopWalker, sc loopScan, fw []loopCall) {
	if sc.readsRA || (sc.remote != remoteHTTP && !c.foldsStatus(c.remoteCallee(sc))) {
		return
	}
	k := foldedKind(c, sc)
	for _, lw := range fw {
		var which []string
		for _, st := range []int{429, 503} {
			// a status folded into the error comes with it
			if w.reaches(w.at[lw.call], k, outcome{err: k == remoteSDK, hasStatus: true, status: st}) == triT {
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

// serverWaitLit reports whether a literal names a header in which the
// server says when to come back: Retry-After (and retry-after-ms), or a
// rate limit's reset (X-RateLimit-Reset, RateLimit-Reset,
// x-ratelimit-reset-requests): a loop that reads one waits what the server
// said.
func serverWaitLit(n *ast.BasicLit) bool {
	if n.Kind != token.STRING {
		return false
	}
	v := strings.ToLower(n.Value)
	return strings.Contains(v, "retry-after") || strings.Contains(v, "ratelimit-reset") || strings.Contains(v, "rate-limit-reset")
}

// deviceFlowPoll reports whether a loop is OAuth's device authorization
// poll (RFC 8628): it asks whether the answer's error is
// "authorization_pending" or "slow_down", the server's "not yet" and "less
// often" on a 400. It goes round on an answer, not a failure, at the
// interval the server gave: not a retry loop.
func (c *checker) deviceFlowPoll(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		var v string
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				v, _ = strconv.Unquote(n.Value)
			}
		case *ast.Ident:
			// const authorizationPending = "authorization_pending"
			if tv, ok := c.info.Types[n]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
				v = constant.StringVal(tv.Value)
			}
		}
		if v == "authorization_pending" || v == "slow_down" {
			found = true
		}
		return !found
	})
	return found
}
