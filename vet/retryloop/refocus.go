package retryloop

import (
	"go/ast"
	"go/types"
)

// A loop may make more than one call that can fail: a read, then a
// create (describe the security group; if it is absent, create it, and
// go round when a racing creator got there first). The walk reads every
// error it meets as the outcome of one attempt, so the read's failure,
// which returns, hides the create's, which goes round. When the first
// call's failure never goes round, refocus asks the same of each later
// call in turn, with what came before it free to go either way.

// maxFocus bounds how many later calls refocus tries.
const maxFocus = 4

// walkLoop walks the loop's paths, with focus (if not nil) as the call
// whose failure is asked about, and judges them.
func (c *checker) walkLoop(s ast.Stmt, label *ast.Ident, fc funcCtx, sc loopScan, focus *ast.CallExpr) (*loopWalker, verdict) {
	w := &loopWalker{c: c, label: label, body: fc.decl, fn: fc.fn, remoteCall: sc.remoteCall, focus: focus,
		waits: map[*ast.CallExpr]bool{}, at: map[*ast.CallExpr][]state{}, loop: s}
	for _, lw := range sc.waits {
		w.waits[lw.call] = true
	}
	start := state{}
	if fs, ok := s.(*ast.ForStmt); ok && fs.Cond != nil {
		start = start.with(cond{expr: fs.Cond})
		w.cond, w.loopBody = fs.Cond, fs.Body
	}
	w.start = start
	if end, falls := w.stmt(sc.body, start, true, true); falls {
		w.goRound(end, sc.body.End())
	}
	return w, w.judge(sc.remote)
}

// refocus returns the walk of the first later call whose failure goes
// round, or w and v as they were.
func (c *checker) refocus(s ast.Stmt, label *ast.Ident, fc funcCtx, sc loopScan, w *loopWalker, v verdict) (*loopWalker, verdict) {
	for i, call := range c.fallibleCalls(sc.body, fc) {
		if i >= maxFocus {
			break
		}
		if (call == w.attemptCall && i == 0) || (w.attemptCall != nil && call.Pos() < w.attemptCall.Pos()) {
			// the attempt is asked about again only with earlier calls to
			// free (a redirect that retries on its own, before the commit)
			continue
		}
		if w2, v2 := c.walkLoop(s, label, fc, sc, call); v2.anyFailure {
			return w2, v2
		}
	}
	return w, v
}

// fallibleCalls returns, in order, the calls in body (outside function
// literals) whose error result is assigned to a variable, waits aside
// unless they also fail (failsAndWaits).
func (c *checker) fallibleCalls(body *ast.BlockStmt, fc funcCtx) []*ast.CallExpr {
	var out []*ast.CallExpr
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			if len(n.Rhs) != 1 {
				return true
			}
			call, ok := ast.Unparen(n.Rhs[0]).(*ast.CallExpr)
			if !ok || !c.assignsError(n.Lhs) {
				return true
			}
			if _, waits := c.wait(call, fc.decl, fc.durFn()); !waits || c.failsAndWaits(call) {
				out = append(out, call)
			}
		}
		return true
	})
	return out
}

// failsAndWaits reports whether call is to a function outside package
// time that waits and returns an error: a client method with retries of
// its own inside (a JetStream key-value Create), as fallible as any call.
func (c *checker) failsAndWaits(call *ast.CallExpr) bool {
	fn := c.callee(call)
	return fn != nil && fn.Pkg() != nil && fn.Pkg().Path() != "time" && lastResultIsError(fn)
}

// assignsError reports whether one of lhs is an error variable.
func (c *checker) assignsError(lhs []ast.Expr) bool {
	for _, l := range lhs {
		if id, ok := l.(*ast.Ident); ok {
			if v, ok := c.objOf(id).(*types.Var); ok && isError(v.Type()) {
				return true
			}
		}
	}
	return false
}

// beforeAttempt reports whether v is given only a result of a call in the
// loop made before the attempt the walk asks about (refocus's focus).
func (ev *evaluator) beforeAttempt(v *types.Var) bool {
	w := ev.w
	if w.focus == nil || !w.attempt.IsValid() {
		return false
	}
	xs := w.c.assignsOf(w.body)[v]
	if len(xs) != 1 || xs[0] == unknownExpr {
		return false
	}
	call, ok := ast.Unparen(xs[0]).(*ast.CallExpr)
	return ok && call != w.attemptCall && call.End() < w.attempt && within([]ast.Node{w.loop}, call)
}
