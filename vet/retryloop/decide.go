package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A loop may leave on the word of something it cannot see into: a retry
// policy behind an interface handed the attempt count or the context
// (wait, ok := retrier.Retry(ctx, n, err); if !ok { return }), a backoff's
// verdict (d, more := b.Next(n)), a callback that returns an error to stop
// (if err := notify(err); err != nil { return err }). Whether that bounds
// the loop is decided out of sight, so such an exit is taken as a bound:
// unbounded is reported only where no way out can be a bound.

// decided reports whether a condition on a way out of the loop tests the
// verdict of such a decider: the call itself, or a local variable some
// assignment of which takes one of its results.
func (w *loopWalker) decided(cd cond, counters map[*types.Var]bool) bool {
	var exprs []ast.Expr
	if cd.expr != nil {
		exprs = append(exprs, cd.expr)
	}
	if cd.tag != nil {
		exprs = append(exprs, cd.tag)
	}
	exprs = append(exprs, cd.values...)
	c := w.c
	found := false
	for _, e := range exprs {
		ast.Inspect(e, func(n ast.Node) bool {
			if found {
				return false
			}
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.CallExpr:
				if w.isDecider(n, counters) {
					found = true
				}
			case *ast.Ident:
				v, ok := c.info.Uses[n].(*types.Var)
				if !ok || c.params[v] || isPkgVar(v) {
					return true
				}
				calls, ok := c.assignedJustBefore(v, e, w.body)
				if !ok {
					calls = c.callsAssigning(v, w.body)
				}
				for _, call := range calls {
					if w.isDecider(call, counters) {
						found = true
					}
				}
			}
			return true
		})
	}
	return found
}

// isDecider reports whether call decides, out of sight, whether the loop
// goes on: it is not the loop's attempt nor a wait, and it is handed the
// loop's attempt counter or a caller's context, or it is a method of a
// policy behind an interface (not of the error or response it may be
// handed), or a callback that returns an error.
func (w *loopWalker) isDecider(call *ast.CallExpr, counters map[*types.Var]bool) bool {
	c := w.c
	if call == w.remoteCall || call == w.attemptCall {
		return false
	}
	if a := w.attemptCall; a != nil && c.callee(a) != nil && c.callee(call) == c.callee(a) && c.sameReceiver(call, a) {
		return false // err := c.connect(ctx) before the loop: its first try, not a policy
	}
	if tv, ok := c.info.Types[call.Fun]; ok && tv.IsType() {
		return false
	}
	if _, ok := c.info.Uses[calleeIdent(call.Fun)].(*types.Builtin); ok {
		return false
	}
	if _, ok := c.wait(call, w.body, w.fn); ok {
		return false
	}
	fn := c.callee(call)
	if fn != nil && funcPath(fn) == "context" {
		return false // ctx.Err() is a bound already; context.Cause too
	}
	for _, a := range call.Args {
		if id := identOf(a); id != nil {
			if v, ok := c.info.Uses[id].(*types.Var); ok && (counters[v] || c.carriesCounter(v, w.body, counters)) {
				return true
			}
		}
		if isContext(c.info.TypeOf(a)) && !c.detachedExpr(a) && !c.ctxBlind {
			return true
		}
	}
	switch {
	case fn == nil:
		// A call through a func value: a callback that returns an error
		// decides, and so does a policy that returns a verdict with the
		// wait before the next attempt (retry, delay := r.fn(err)), which
		// may count; one that returns only a bool on the error it is
		// handed is a classifier.
		sig, ok := c.info.TypeOf(call.Fun).Underlying().(*types.Signature)
		if !ok || sig.Results().Len() == 0 {
			return false
		}
		if policyResults(sig.Results()) {
			return true
		}
		return isError(sig.Results().At(sig.Results().Len()-1).Type()) && !c.handedOnlyData(call)
	case isIfaceMethod(fn):
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return false
		}
		t := c.info.TypeOf(sel.X)
		if t == nil || isError(t) || types.Implements(t, errorIface) || isNamed(t, "net/http", "Response") {
			return false // err.Temporary(): the error classifies itself
		}
		if p := funcPath(fn); p != "" && isStdPath(p) {
			return false // a standard library interface (io.Reader): no policy
		}
		return !w.sameDependency(call, sel, fn)
	}
	return false
}

// handedOnlyData reports whether a callback is handed arguments and none
// of them is an error or a context: change(rec, lease) applies the
// caller's edit to what the round read, work whose error says the edit
// failed, not a verdict on the loop's failures (notify(err), stop()).
func (c *checker) handedOnlyData(call *ast.CallExpr) bool {
	if len(call.Args) == 0 {
		return false
	}
	for _, a := range call.Args {
		t := c.info.TypeOf(a)
		if t == nil || isError(t) || types.Implements(t, errorIface) || isContext(t) {
			return false
		}
	}
	return true
}

// sameDependency reports whether an interface method call is another call
// of the dependency the loop tries: made on the receiver the attempt is
// made on, handed no error, with an error as its last result. A store's
// read before its conditional write (rec, err := st.Get(k); … st.Put(k,
// rec)) fails as the dependency fails; it decides nothing about the
// conflicts the loop goes round on.
func (w *loopWalker) sameDependency(call *ast.CallExpr, sel *ast.SelectorExpr, fn *types.Func) bool {
	a := w.attemptCall
	if a == nil || !lastResultIsError(fn) {
		return false
	}
	as, ok := ast.Unparen(a.Fun).(*ast.SelectorExpr)
	if !ok || types.ExprString(as.X) != types.ExprString(sel.X) {
		return false
	}
	for _, arg := range call.Args {
		if t := w.c.info.TypeOf(arg); t != nil && (isError(t) || types.Implements(t, errorIface)) {
			return false // r.Next(err): a verdict on the failure
		}
	}
	return true
}

// sameReceiver reports whether two calls of one method are made on the
// same variable or field path (c.connect(ctx) and c.connect(ctx)), or are
// both calls of a function.
func (c *checker) sameReceiver(a, b *ast.CallExpr) bool {
	sa, okA := ast.Unparen(a.Fun).(*ast.SelectorExpr)
	sb, okB := ast.Unparen(b.Fun).(*ast.SelectorExpr)
	if !okA || !okB {
		return !okA && !okB
	}
	if _, isPkg := c.info.Uses[identOf(sa.X)].(*types.PkgName); isPkg {
		return true // pkg.Connect(ctx) both times
	}
	return types.ExprString(sa.X) == types.ExprString(sb.X)
}

// policyResults reports whether a func's results are a verdict and a wait:
// a bool and a time.Duration.
func policyResults(rs *types.Tuple) bool {
	verdict, wait := false, false
	for i := range rs.Len() {
		t := rs.At(i).Type()
		verdict = verdict || isBool(t)
		wait = wait || isNamed(t, "time", "Duration")
	}
	return verdict && wait
}

// callsAssigning returns the calls whose results some assignment in body
// gives v (x := f(), a, ok := f()).
func (c *checker) callsAssigning(v *types.Var, body *ast.BlockStmt) []*ast.CallExpr {
	if body == nil {
		return nil
	}
	var out []*ast.CallExpr
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for i, l := range as.Lhs {
			id, ok := l.(*ast.Ident)
			if !ok || (c.info.Defs[id] != v && c.info.Uses[id] != v) {
				continue
			}
			rhs := rhsOf(as, i)
			if call, ok := ast.Unparen(rhs).(*ast.CallExpr); ok {
				out = append(out, call)
			}
		}
		return true
	})
	return out
}

// loopCounters returns the integer variables the loop counts with: those
// its post statement or its body increments (n++, n += 1).
func (c *checker) loopCounters(s ast.Stmt) map[*types.Var]bool {
	out := map[*types.Var]bool{}
	mark := func(e ast.Expr) {
		if id := identOf(e); id != nil {
			if v, ok := c.info.Uses[id].(*types.Var); ok && isIntegerNotDuration(v.Type()) {
				out[v] = true
			}
		}
	}
	ast.Inspect(s, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IncDecStmt:
			if n.Tok == token.INC {
				mark(n.X)
			}
		case *ast.AssignStmt:
			if n.Tok == token.ADD_ASSIGN {
				for _, l := range n.Lhs {
					mark(l)
				}
			}
		}
		return true
	})
	return out
}

// detachedExpr reports whether a context expression is one the function
// made for itself from context.Background() (not its caller's).
func (c *checker) detachedExpr(e ast.Expr) bool {
	if call, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		return c.fromBackground(call, nil, 0)
	}
	if id := identOf(e); id != nil {
		if v, ok := c.info.Uses[id].(*types.Var); ok {
			return c.detached[v]
		}
	}
	return false
}

// isPkgVar reports whether v is a package-level variable.
func isPkgVar(v *types.Var) bool {
	return v.Pkg() != nil && v.Parent() == v.Pkg().Scope()
}

// carriesCounter reports whether body gives v a composite literal (or its
// address) that holds one of the loop's counters: a policy's context
// rebuilt each round (pctx = &RetryPolicyContext{RetriesAttempted: n}).
func (c *checker) carriesCounter(v *types.Var, body *ast.BlockStmt, counters map[*types.Var]bool) bool {
	for _, x := range c.assignsOf(body)[v] {
		if u, ok := ast.Unparen(x).(*ast.UnaryExpr); ok {
			x = u.X
		}
		lit, ok := ast.Unparen(x).(*ast.CompositeLit)
		if !ok {
			continue
		}
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			if id := identOf(el); id != nil {
				if cv, ok := c.info.Uses[id].(*types.Var); ok && counters[cv] {
					return true
				}
			}
		}
	}
	return false
}

// assignedJustBefore returns the calls that give v its value where the if
// statement testing e does: the if's own init (if err := f(); err != nil),
// or the statement just before it (_, err = f.Seek(0, 0); if err != nil).
// Any other assignment of v is dead by then, so a policy's call elsewhere
// in the loop (err = fetcher.NewLink()) decides nothing on this way out.
// ok is false when neither assigns v.
func (c *checker) assignedJustBefore(v *types.Var, e ast.Expr, body *ast.BlockStmt) (calls []*ast.CallExpr, ok bool) {
	if e == nil || body == nil {
		return nil, false
	}
	assigns := func(st ast.Stmt) bool {
		if ls, isLabel := st.(*ast.LabeledStmt); isLabel {
			st = ls.Stmt // retry: _, err = f.Seek(0, 0)
		}
		as, isAssign := st.(*ast.AssignStmt)
		if !isAssign {
			return false
		}
		hit := false
		for _, l := range as.Lhs {
			if id, isID := ast.Unparen(l).(*ast.Ident); isID && c.objOf(id) == types.Object(v) {
				hit = true
			}
		}
		if !hit {
			return false
		}
		for _, r := range as.Rhs {
			if call, isCall := ast.Unparen(r).(*ast.CallExpr); isCall {
				calls = append(calls, call)
			}
		}
		return true
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if ok {
			return false
		}
		b, isBlock := n.(*ast.BlockStmt)
		if !isBlock {
			return true
		}
		for i, st := range b.List {
			is, isIf := st.(*ast.IfStmt)
			if !isIf || e.Pos() < is.Cond.Pos() || e.End() > is.Cond.End() {
				continue
			}
			if is.Init != nil && assigns(is.Init) || i > 0 && assigns(b.List[i-1]) {
				ok = true
			}
			return false
		}
		return true
	})
	return calls, ok
}
