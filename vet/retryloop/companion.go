package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
)

// companionOfOutcome reports whether e is a variable given, beside the
// error the loop judges, another result of the same call (conn, err :=
// d.Dial(addr)) and of a type that can be nil: a call that succeeds hands
// back its value, so on success the value is not nil (if conn != nil &&
// err == nil { return conn }). On a failure it may be either.
func (ev *evaluator) companionOfOutcome(e ast.Expr) bool {
	c := ev.w.c
	id := identOf(e)
	if id == nil || ev.w.body == nil {
		return false
	}
	v, ok := c.info.Uses[id].(*types.Var)
	if !ok || !nillable(v.Type()) || isError(v.Type()) {
		return false
	}
	found := false
	ast.Inspect(ev.w.body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || found || len(as.Rhs) != 1 || len(as.Lhs) < 2 {
			return !found
		}
		if _, isCall := ast.Unparen(as.Rhs[0]).(*ast.CallExpr); !isCall {
			return true
		}
		mine, errOutcome := false, false
		for _, l := range as.Lhs {
			lid, ok := l.(*ast.Ident)
			if !ok {
				continue
			}
			o := c.objOf(lid)
			switch {
			case o == v:
				mine = true
			case o != nil && isError(o.Type()) && ev.st.srcs[o] == srcOutcome:
				errOutcome = true
			}
		}
		found = mine && errOutcome
		return !found
	})
	return found
}

// nillable reports whether a value of type t can be nil.
func nillable(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Interface, *types.Map, *types.Chan, *types.Signature:
		return true
	}
	return false
}

// soleResult reports whether e (a variable or a field) is given, in the
// loop, the only result of the call the loop attempts, a pointer, map,
// slice or interface that is not an error: a helper that folds every
// failure into nil (data := c.fetchData()), and nothing else: every
// nil it returns is under an err != nil test, so nil is no "not yet".
func (ev *evaluator) soleResult(e ast.Expr) bool {
	c := ev.w.c
	if ev.w.body == nil || !nillable(c.info.TypeOf(e)) || isError(c.info.TypeOf(e)) {
		return false
	}
	want := types.ExprString(e)
	if r, ok := ev.w.soleResults[want]; ok {
		return r
	}
	if ev.w.soleResults == nil {
		ev.w.soleResults = map[string]bool{}
	}
	found := false
	ast.Inspect(ev.w.body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || found || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return !found
		}
		call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
		if !ok || (call != ev.w.attemptCall && call != ev.w.remoteCall) {
			return true
		}
		if sig, ok := c.info.TypeOf(call.Fun).(*types.Signature); ok && sig.Results().Len() == 1 && types.ExprString(as.Lhs[0]) == want {
			found = c.nilOnlyOnError(c.callee(call))
		}
		return !found
	})
	ev.w.soleResults[want] = found
	return found
}

// nilOnlyOnError reports whether fn, a function of this package, returns
// a literal nil only where a test that an error is not nil holds, and
// something else at least once.
func (c *checker) nilOnlyOnError(fn *types.Func) bool {
	d := c.decls[fn]
	if d == nil || d.Body == nil {
		return false
	}
	ok, other := true, false
	returnsUnderIfs(d.Body, func(r *ast.ReturnStmt, ifs []*ast.IfStmt) bool {
		switch {
		case len(r.Results) != 1:
		case isNil(c.info, r.Results[0]):
			ok = slices.ContainsFunc(ifs, func(s *ast.IfStmt) bool { return c.errNotNil(s.Cond) })
		default:
			other = true
		}
		return ok
	})
	return ok && other
}

// errNotNil reports whether cond is err != nil, for an error err.
func (c *checker) errNotNil(cond ast.Expr) bool {
	b, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	if !ok || b.Op != token.NEQ {
		return false
	}
	x, y := b.X, b.Y
	if isNil(c.info, x) {
		x, y = y, x
	}
	return isNil(c.info, y) && isError(c.info.TypeOf(x))
}
