package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// isCtxErrTest reports whether a call tests an error for the caller's
// cancellation: errors.Is(err, context.Canceled) or
// errors.Is(err, context.DeadlineExceeded).
func (c *checker) isCtxErrTest(call *ast.CallExpr) bool {
	if !isFunc(c.callee(call), "errors", "Is") || len(call.Args) != 2 {
		return false
	}
	return c.isCtxErr(call.Args[1])
}

// isCtxErr reports whether e is context.Canceled or
// context.DeadlineExceeded.
func (c *checker) isCtxErr(e ast.Expr) bool {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	v, ok := c.info.Uses[sel.Sel].(*types.Var)
	return ok && v.Pkg() != nil && v.Pkg().Path() == "context" && (v.Name() == "Canceled" || v.Name() == "DeadlineExceeded")
}

// inlineAttempt reads the verdict an attempt helper returns beside its
// error (again, err := post(c, req)) through its body, when the helper
// itself makes the HTTP call: the call's response and error inside it are
// bound to the outcome (a status comes with a nil error there, as from
// net/http), its parameters are free. ok is false if the helper is out of
// sight or makes no such call where the inliner can bind it.
func (ev *evaluator) inlineAttempt(call *ast.CallExpr, idx int, o outcome) (tri, bool) {
	c := ev.w.c
	if call != ev.w.remoteCall && call != ev.w.attemptCall {
		return triU, false
	}
	env, d, ok := c.bindCall(call, idx, func(ast.Expr) binding { return binding{} })
	if !ok {
		return triU, false
	}
	inner := outcome{hasStatus: o.hasStatus, status: o.status, err: !o.hasStatus}
	if !c.bindInnerCall(d.Body, env, inner) {
		return triU, false
	}
	in := &inliner{c: c, o: inner, k: remoteHTTP, env: env, body: d.Body}
	return in.run(idx), true
}

// bindInnerCall binds, in env, the response and error variables of the
// one HTTP call in body (resp, err := c.Do(req)) to the inner outcome.
func (c *checker) bindInnerCall(body *ast.BlockStmt, env map[*types.Var]binding, o outcome) bool {
	var found *ast.AssignStmt
	n := 0
	ast.Inspect(body, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.FuncLit, *ast.GoStmt:
			return false
		case *ast.AssignStmt:
			if len(m.Rhs) == 1 {
				if call, ok := ast.Unparen(m.Rhs[0]).(*ast.CallExpr); ok && c.remoteKind(call) == remoteHTTP && returnsResponse(c.callee(call)) {
					found = m
					n++
				}
			}
		}
		return true
	})
	if n != 1 {
		return false
	}
	bound := false
	for _, l := range found.Lhs {
		id, ok := l.(*ast.Ident)
		if !ok {
			continue
		}
		v, _ := c.info.Defs[id].(*types.Var)
		if v == nil {
			v, _ = c.info.Uses[id].(*types.Var)
		}
		switch {
		case v == nil:
		case isError(v.Type()):
			env[v] = binding{kind: bErr, val: int64(boolInt(o.err))}
			bound = true
		case isNamed(v.Type(), "net/http", "Response"):
			env[v] = binding{kind: bResp}
			bound = true
		}
	}
	return bound
}

// pickedFuncs returns the named functions a call of a function of this
// package returns when it picks a func value: each return is a named
// function (the package's default), or a func parameter returned only
// under a test that it is set (if d != nil { return d }), the caller's
// setting over that default, which by default is unset. ok is false if
// any return is something else, or no default is named.
func (c *checker) pickedFuncs(call *ast.CallExpr) ([]*types.Func, bool) {
	fn := c.callee(call)
	d := c.decls[fn]
	if d == nil {
		return nil, false
	}
	sig := fn.Type().(*types.Signature)
	if sig.Results().Len() != 1 {
		return nil, false
	}
	if _, isFunc := sig.Results().At(0).Type().Underlying().(*types.Signature); !isFunc {
		return nil, false
	}
	guarded := c.nonNilGuarded(d.Body)
	var out []*types.Func
	ok := ownReturns(d.Body, func(r *ast.ReturnStmt) bool {
		if len(r.Results) != 1 {
			return false
		}
		var obj types.Object
		switch x := ast.Unparen(r.Results[0]).(type) {
		case *ast.Ident:
			obj = c.info.Uses[x]
		case *ast.SelectorExpr:
			obj = c.info.Uses[x.Sel]
		}
		switch o := obj.(type) {
		case *types.Func:
			out = append(out, o)
			return true
		case *types.Var:
			return c.params[o] && guarded[r] == o
		}
		return false
	})
	return out, ok && len(out) > 0
}

// nonNilGuarded maps each return statement that is the whole body of an
// `if v != nil { return … }` to v.
func (c *checker) nonNilGuarded(body *ast.BlockStmt) map[*ast.ReturnStmt]*types.Var {
	m := map[*ast.ReturnStmt]*types.Var{}
	ast.Inspect(body, func(n ast.Node) bool {
		is, ok := n.(*ast.IfStmt)
		if !ok || len(is.Body.List) != 1 {
			return true
		}
		r, ok := is.Body.List[0].(*ast.ReturnStmt)
		be, isBin := ast.Unparen(is.Cond).(*ast.BinaryExpr)
		if !ok || !isBin || be.Op != token.NEQ || !isNil(c.info, be.Y) {
			return true
		}
		if id, ok := ast.Unparen(be.X).(*ast.Ident); ok {
			if v, ok := c.info.Uses[id].(*types.Var); ok {
				m[r] = v
			}
		}
		return true
	})
	return m
}
