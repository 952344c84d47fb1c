package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// besideVerdict reads a bool the loop's attempt returns beside its error
// (retry, err := execute()) from the returns of the function or local
// literal called: on a failure, the bool of every return whose error may
// be non-nil; on a success, of every return whose error may be nil. It
// answers when they all agree (execute returns false beside every error:
// a failure never goes round), and ok is false when the call is not the
// attempt or its body is out of sight.
func (ev *evaluator) besideVerdict(v *types.Var, o outcome) (tri, bool) {
	c := ev.w.c
	call, idx, n := c.tupleSource(v, ev.w.body)
	if call == nil {
		// retry, err := s.makeRequest(ctx) once before the loop and
		// again in it: the loop's own assignment is the attempt.
		call, idx, n = c.attemptTuple(v, ev.w.attemptCall, ev.w.attemptAssign)
	}
	if call == nil || call != ev.w.attemptCall {
		return triU, false
	}
	if o.hasStatus {
		// retry, err := s.makeRequest(ctx), the helper making the HTTP
		// call itself: its verdict on a status is read through its body.
		return ev.inlineAttempt(call, idx, o)
	}
	body := c.calledBody(call, ev.w.body)
	if body == nil {
		return triU, false
	}
	seen, all := false, false
	agree := ownReturns(body, func(m *ast.ReturnStmt) bool {
		if len(m.Results) != n {
			return false
		}
		errNil := isNil(c.info, m.Results[n-1])
		errSet := !errNil && !c.mayBeNil(m.Results[n-1], m, body)
		if (o.err && errNil) || (!o.err && errSet) {
			return true // this return is not taken on o
		}
		b, known := c.constBool(m.Results[idx])
		switch {
		case !known:
			return false
		case !seen:
			seen, all = true, b
		}
		return b == all
	})
	if !seen || !agree {
		return triU, true
	}
	return boolTri(all), true
}

// tupleSource returns the call whose result idx v is assigned from, in a
// tuple assignment whose last value is an error (retry, err := f()), and
// the number of results; nil if v is assigned otherwise or more than once.
func (c *checker) tupleSource(v *types.Var, body *ast.BlockStmt) (*ast.CallExpr, int, int) {
	var found *ast.CallExpr
	idx, n, count := 0, 0, 0
	ast.Inspect(body, func(m ast.Node) bool {
		as, ok := m.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for i, l := range as.Lhs {
			id, ok := l.(*ast.Ident)
			if !ok || c.objOf(id) != v {
				continue
			}
			count++
			call, ok := ast.Unparen(rhsOf(as, i)).(*ast.CallExpr)
			if len(as.Rhs) != 1 || len(as.Lhs) < 2 || !ok || !isError(c.info.TypeOf(as.Lhs[len(as.Lhs)-1])) {
				continue
			}
			found, idx, n = call, i, len(as.Lhs)
		}
		return true
	})
	if count != 1 {
		return nil, 0, 0
	}
	return found, idx, n
}

// attemptTuple returns attempt, and the index of v among the results it
// is assigned to and their number, when as, a tuple assignment whose last
// value is an error, assigns v attempt's results; nil otherwise.
func (c *checker) attemptTuple(v *types.Var, attempt *ast.CallExpr, as *ast.AssignStmt) (*ast.CallExpr, int, int) {
	if attempt == nil || as == nil || len(as.Rhs) != 1 || ast.Unparen(as.Rhs[0]) != attempt || len(as.Lhs) < 2 || !isError(c.info.TypeOf(as.Lhs[len(as.Lhs)-1])) {
		return nil, 0, 0
	}
	for i, l := range as.Lhs {
		if id, ok := l.(*ast.Ident); ok && c.objOf(id) == v {
			return attempt, i, len(as.Lhs)
		}
	}
	return nil, 0, 0
}

// calledBody returns the body of the function a call runs: a function of
// this package, or a local variable given one function literal.
func (c *checker) calledBody(call *ast.CallExpr, decl *ast.BlockStmt) *ast.BlockStmt {
	if fn := c.callee(call); fn != nil {
		if d := c.decls[fn]; d != nil {
			return d.Body
		}
		return nil
	}
	g, ok := c.funcTargets(call, decl)
	if !ok || len(g.lits) != 1 || len(g.targets) > 0 || len(g.made) > 0 {
		return nil
	}
	return g.lits[0].Body
}

// mayBeNil reports whether an error expression that ret returns may be
// nil: not a fresh error (errors.New, fmt.Errorf), nor a variable the
// return is guarded by testing non-nil (if err != nil { return true, err }).
func (c *checker) mayBeNil(e ast.Expr, ret *ast.ReturnStmt, body *ast.BlockStmt) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		fn := c.callee(x)
		return !isFunc(fn, "errors", "New") && !isFunc(fn, "fmt", "Errorf")
	case *ast.Ident:
		v := c.info.Uses[x]
		guarded := false
		ast.Inspect(body, func(m ast.Node) bool {
			s, ok := m.(*ast.IfStmt)
			if !ok || guarded {
				return !guarded
			}
			b, ok := ast.Unparen(s.Cond).(*ast.BinaryExpr)
			if ok && b.Op == token.NEQ && isNil(c.info, b.Y) && identOf(b.X) != nil && c.info.Uses[identOf(b.X)] == v &&
				s.Body.Pos() <= ret.Pos() && ret.End() <= s.Body.End() {
				guarded = true
			}
			return true
		})
		return !guarded
	}
	return true
}

func isNil(info *types.Info, e ast.Expr) bool {
	if e == zeroNil {
		return true // a named error's zero value at a naked return
	}
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		if _, ok := info.Uses[id].(*types.Nil); ok {
			return true
		}
	}
	tv, ok := info.Types[e]
	return ok && tv.IsNil()
}
