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
// and reads no Retry-After anywhere it can see, or reads it only in a
// branch that status never takes (case 429: reads it; case >= 500: the
// 503 waits the client's own schedule).
func (c *checker) reportRetryAfter(sc loopScan, v verdict) {
	var which []string
	for _, st := range []int{429, 503} {
		if v.retried[st] == triT && (!sc.readsRA || c.readsOnlyOff(sc, st)) {
			which = append(which, fmt.Sprint(st))
		}
	}
	if len(which) == 0 {
		return
	}
	// reported at the first wait, or, in a loop that sends again at once,
	// at the call it sends again
	at := loopCall{call: sc.remoteCall}
	if len(sc.waits) > 0 {
		at = sc.waits[0]
	} else if at.call == nil {
		return
	}
	if sc.readsRA {
		// case resp.StatusCode == 429: wait = retryAfter(resp); case
		// resp.StatusCode >= 500: wait = 1 << attempt. Reported at the
		// first wait in a branch taken on the status not read, else at
		// the first one it can reach.
		w, found := at, false
		st, _ := strconv.Atoi(which[0])
		for _, lw := range sc.waits {
			off, on := c.statusBranch(sc.body, lw.call, st)
			if !off && (on || !found) {
				w, found = lw, true
				if on {
					break
				}
			}
		}
		c.add(finding{check: CheckRetryAfter, pos: w.call.Pos(), end: w.call.End(),
			msg: fmt.Sprintf("retry loop retries %s without reading Retry-After, which it reads only on another status: the server said when to come back; read it there too (recoilhttp.ServerWait) or use recoilhttp.Transport", strings.Join(which, " and "))})
		return
	}
	c.addRetryAfter(at, which)
}

// readsOnlyOff reports whether every place a loop reads Retry-After is
// under a test of the status that does not hold on st (the header read
// in a case for 429 alone, never on the 503 that also goes round).
func (c *checker) readsOnlyOff(sc loopScan, st int) bool {
	if len(sc.raReads) == 0 {
		return false
	}
	for _, r := range sc.raReads {
		if !c.offStatus(sc.body, r, st) {
			return false
		}
	}
	return true
}

// offStatus reports whether n, inside body, lies in a branch of an if or
// a switch whose test of the status is false on st.
func (c *checker) offStatus(body *ast.BlockStmt, n ast.Node, st int) bool {
	off, _ := c.statusBranch(body, n, st)
	return off
}

// statusBranch reads the ifs and switch cases on the way to n, inside
// body: off when one's test of the status is false on st, on when one's
// is true on it.
func (c *checker) statusBranch(body *ast.BlockStmt, n ast.Node, st int) (off, on bool) {
	var stack []ast.Node
	ast.Inspect(body, func(x ast.Node) bool {
		if x == nil {
			stack = stack[:len(stack)-1]
			return false
		}
		if x == n {
			off, on = c.stackBranch(stack, n, st)
		}
		if x.Pos() > n.Pos() || x.End() < n.End() || x == n {
			return false // n is not inside x
		}
		stack = append(stack, x)
		return true
	})
	return off, on
}

// stackBranch is statusBranch on the nodes from body down to n.
func (c *checker) stackBranch(stack []ast.Node, n ast.Node, st int) (off, on bool) {
	for i, x := range stack {
		var inner ast.Node = n
		if i+1 < len(stack) {
			inner = stack[i+1]
		}
		switch x := x.(type) {
		case *ast.IfStmt:
			holds, ok := c.statusCond(x.Cond, st)
			switch {
			case !ok || inner != x.Body && inner != x.Else:
			case (inner == x.Body) != holds:
				off = true
			default:
				on = true
			}
		case *ast.CaseClause:
			if i < 2 || len(x.List) == 0 {
				continue
			}
			if sw, ok := stack[i-2].(*ast.SwitchStmt); ok {
				holds, sure := c.caseHolds(sw, x, st)
				off = off || !holds
				on = on || sure
			}
		}
	}
	return off, on
}

// caseHolds reports whether a switch's case may be taken on status st:
// false only when each of its expressions is a test of the status (or a
// status the switch's tag is compared with) that is false on st; sure when
// one of them is true on it.
func (c *checker) caseHolds(sw *ast.SwitchStmt, cc *ast.CaseClause, st int) (holds, sure bool) {
	for _, e := range cc.List {
		if sw.Tag != nil {
			e = &ast.BinaryExpr{X: sw.Tag, Op: token.EQL, Y: e}
		}
		h, ok := c.statusCond(e, st)
		if !ok || h {
			holds = true
		}
		if ok && h {
			sure = true
		}
	}
	return holds, sure
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
			if w.waitReached(lw, k, outcome{err: k == remoteSDK, hasStatus: true, status: st}) == triT {
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
