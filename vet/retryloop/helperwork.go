package retryloop

import (
	"go/ast"
	"go/types"
)

// retryHelperWork is one more than the index of fn's func parameter that
// fn's own loop retries on a schedule with no jitter, or 0: a
// hand-written helper (Retry(times, delay, action)) whose loop calls the
// parameter, goes round when it fails and leaves when it succeeds, and
// waits only constant or purely exponential times. Its callers hand it
// the work to retry, as they would a retry library's Do.
//
// A poll helper, whose condition goes round on a success that says "not
// yet" and leaves on a failure, is no such helper; nor is one that makes
// a remote call of its own (its loop is the retry, and is judged so).
//
// A helper whose waits are what a policy parameter's method says
// (interval, ok := backOff.Next()) retries on the caller's schedule: its
// second result is one more than that parameter's index. One whose waits
// are what a policy kept in its receiver's field says (a Retry's Do
// asking r.policy.Next()) retries on the receiver's constructor's
// caller's schedule: its third result names that field.
func (c *checker) retryHelperWork(fn *types.Func, d *ast.FuncDecl) (work, policy int, field string) {
	if fn == nil || !hasFuncParam(fn) {
		return 0, 0, ""
	}
	fc := funcCtx{fn: fn, ftype: d.Type, decl: d.Body, own: d.Body}
	ast.Inspect(d.Body, func(n ast.Node) bool {
		if work != 0 {
			return false
		}
		switch n := n.(type) {
		case *ast.GoStmt, *ast.FuncLit:
			return false
		case *ast.ForStmt, *ast.RangeStmt:
			work, policy, field = c.loopRetriesParam(n.(ast.Stmt), fc)
		}
		return true
	})
	return work, policy, field
}

// loopRetriesParam is one more than the index of the func parameter one
// loop retries with pure waits only, or 0; and, when the waits are a
// policy parameter's, one more than its index, or a policy field's, its
// name.
func (c *checker) loopRetriesParam(s ast.Stmt, fc funcCtx) (work, policy int, field string) {
	sc := c.scanLoop(s, fc)
	if sc.delegated || sc.remote != remoteNone || len(sc.waits) == 0 {
		return 0, 0, ""
	}
	c.resolveByCallers(sc.waits, fc.fn)
	params := fc.fn.Type().(*types.Signature).Params()
	for _, lw := range sc.waits {
		// a duration parameter only scaled by counters is the same for
		// every round, whatever the caller passes
		switch d := lw.w.dur; {
		case d.kind == pField:
			if field != "" && field != d.field {
				return 0, 0, ""
			}
			field = d.field
		case d.kind != pPure && d.kind != pParam:
			return 0, 0, ""
		}
		if i, ok := lw.w.dur.single(); ok && lw.w.dur.kind == pParam && i < params.Len() && types.IsInterface(params.At(i).Type()) {
			if policy != 0 && policy != i+1 {
				return 0, 0, ""
			}
			policy = i + 1
		}
	}
	if policy != 0 && field != "" {
		return 0, 0, "" // two policies: which paces the rounds is not one answer
	}
	w, v := c.walkLoop(s, nil, fc, sc, nil)
	if !v.anyFailure || !v.leavesOnSuccess || w.attemptCall == nil {
		return 0, 0, ""
	}
	id, ok := ast.Unparen(w.attemptCall.Fun).(*ast.Ident)
	if !ok {
		return 0, 0, ""
	}
	for i := range params.Len() {
		if p := params.At(i); c.info.Uses[id] == p {
			if _, isFunc := p.Type().Underlying().(*types.Signature); isFunc {
				return i + 1, policy, field
			}
		}
	}
	return 0, 0, ""
}

// hasFuncParam reports whether one of fn's parameters is a function.
func hasFuncParam(fn *types.Func) bool {
	params := fn.Type().(*types.Signature).Params()
	for i := range params.Len() {
		if _, ok := params.At(i).Type().Underlying().(*types.Signature); ok {
			return true
		}
	}
	return false
}

// localWork reports whether work is a function literal whose calls all act
// on this machine only or are the standard library's pure functions (a
// lock file retried on EBUSY): nothing shared to synchronise on.
func (c *checker) localWork(work ast.Expr) bool {
	lit, ok := ast.Unparen(work).(*ast.FuncLit)
	return ok && c.remoteIn(lit) == nil && c.localBody(lit.Body, 0)
}

// pollWork is one more than the index of fn's func parameter that a call
// of the wait.Poll family in fn's body retries: its condition calls the
// parameter and answers "not yet" on a failure and never on a success,
// every constant interval. Callers hand the helper the work to retry
// (RetryUntilSucceed(ctx, interval, desc, log, action)).
func (c *checker) pollWork(call *ast.CallExpr, decl *ast.BlockStmt, fn *types.Func) int {
	callee := c.callee(call)
	if fn == nil || callee == nil || funcPath(callee) != kWaitPath || recvNamed(callee) != nil {
		return 0
	}
	p, ok := kPolls[callee.Name()]
	if !ok || len(call.Args) <= p.interval {
		return 0
	}
	cond := c.condArg(call)
	if _, ok := c.failureRound(cond, decl); !ok || c.pollInterval(call, p, decl, fn).kind != pPure {
		return 0
	}
	work := 0
	params := fn.Type().(*types.Signature).Params()
	for _, body := range c.condBodies(cond, decl) {
		ast.Inspect(body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := ast.Unparen(call.Fun).(*ast.Ident)
			if !ok {
				return true
			}
			for i := range params.Len() {
				if c.info.Uses[id] == params.At(i) {
					work = i + 1
				}
			}
			return true
		})
	}
	return work
}
