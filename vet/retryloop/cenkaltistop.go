package retryloop

import (
	"go/ast"
	"go/types"
)

// cenkalti/backoff before v5 stops retrying only when its BackOff answers
// Stop, the operation marks an error Permanent or a WithContext context
// ends. A ConstantBackOff or a ZeroBackOff never answers Stop, nor does an
// ExponentialBackOff whose MaxElapsedTime is zero (left out of a literal,
// or set so): NewExponentialBackOff's 15 minutes are the only bound the
// library gives by default.

// cenkaltiForever reports whether a Retry call of cenkalti/backoff before
// v5 goes round until its operation succeeds: the BackOff, made in sight,
// never stops and no WithMaxRetries or WithContext wraps it, and the
// operation, in sight with the package's helpers it calls, never marks an
// error Permanent (the way a closed client or a hopeless answer ends it)
// nor tests a context.
func (c *checker) cenkaltiForever(path string, b, op ast.Expr, decl *ast.BlockStmt) bool {
	if cenkaltiMajor(path) >= 5 || !c.neverStops(b, decl, 0) {
		return false
	}
	bodies := c.condBodies(op, decl)
	if len(bodies) == 0 {
		return false
	}
	for _, body := range bodies {
		if c.marksPermanent(body, 0) || c.testsCtxIn(body) {
			return false
		}
	}
	return true
}

// testsCtxIn reports whether an if in body tests a context or its error
// (if ctx.Err() != nil { return nil }): a cancelled caller may end the
// retries that way.
func (c *checker) testsCtxIn(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if ifs, ok := n.(*ast.IfStmt); ok && c.testsCtx(ifs.Cond) {
			found = true
		}
		return !found
	})
	return found
}

// marksPermanent reports whether body, or a function of this package it
// calls (two calls deep), marks an error Permanent (backoff.Permanent(err),
// &backoff.PermanentError{…}); goroutines it starts are not followed.
func (c *checker) marksPermanent(body *ast.BlockStmt, depth int) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			return false
		case *ast.CallExpr:
			if f := c.callee(n); f != nil && isCenkalti(funcPath(f)) && f.Name() == "Permanent" {
				found = true
			} else if fd := c.decls[f]; fd != nil && fd.Body != nil && depth < 2 {
				found = c.marksPermanent(fd.Body, depth+1)
			}
		case *ast.CompositeLit:
			found = cenkaltiType(c.info.TypeOf(n)) == "PermanentError"
		}
		return !found
	})
	return found
}

// neverStops reports whether every way body makes the cenkalti BackOff e
// is in sight and never answers Stop.
func (c *checker) neverStops(e ast.Expr, body *ast.BlockStmt, depth int) bool {
	if depth > 6 {
		return false
	}
	if id, ok := ast.Unparen(e).(*ast.Ident); ok && body != nil {
		if v, ok := c.info.Uses[id].(*types.Var); ok {
			if x, set := c.lastFieldSet(v, body, "MaxElapsedTime"); set && !c.isZero(x) {
				return false
			} else if set {
				return c.allExponential(e, body, depth)
			}
		}
	}
	srcs := c.sources(e, body, depth)
	if len(srcs) == 0 {
		return false
	}
	for _, s := range srcs {
		if !c.madeNeverStopping(s) {
			return false
		}
	}
	return true
}

// madeNeverStopping reports whether a source makes a BackOff that never
// answers Stop.
func (c *checker) madeNeverStopping(s source) bool {
	x := s.e
	if u, ok := x.(*ast.UnaryExpr); ok {
		x = ast.Unparen(u.X)
	}
	switch x := x.(type) {
	case *ast.CompositeLit:
		switch cenkaltiType(c.info.TypeOf(x)) {
		case "ConstantBackOff", "ZeroBackOff":
			return true
		case "ExponentialBackOff":
			v, keyed := litKey(x, "MaxElapsedTime")
			return keyed && (v == nil || c.isZero(v))
		}
	case *ast.CallExpr:
		f := c.callee(x)
		if f == nil || !isCenkalti(funcPath(f)) {
			return false
		}
		switch f.Name() {
		case "NewConstantBackOff":
			return true
		case "NewExponentialBackOff": // v4's options: WithMaxElapsedTime(0)
			for _, a := range x.Args {
				if opt, ok := ast.Unparen(a).(*ast.CallExpr); ok && len(opt.Args) == 1 {
					if g := c.callee(opt); g != nil && g.Name() == "WithMaxElapsedTime" && c.isZero(opt.Args[0]) {
						return true
					}
				}
			}
		}
	}
	return false
}

// allExponential reports whether every way body makes e is an
// ExponentialBackOff of cenkalti's (a literal or NewExponentialBackOff).
func (c *checker) allExponential(e ast.Expr, body *ast.BlockStmt, depth int) bool {
	srcs := c.sources(e, body, depth)
	for _, s := range srcs {
		x := s.e
		if u, ok := x.(*ast.UnaryExpr); ok {
			x = ast.Unparen(u.X)
		}
		switch x := x.(type) {
		case *ast.CompositeLit:
			if cenkaltiType(c.info.TypeOf(x)) != "ExponentialBackOff" {
				return false
			}
		case *ast.CallExpr:
			if f := c.callee(x); f == nil || !isCenkalti(funcPath(f)) || f.Name() != "NewExponentialBackOff" {
				return false
			}
		default:
			return false
		}
	}
	return len(srcs) > 0
}

// cenkaltiType is the name of t when it is a type of cenkalti/backoff's.
func cenkaltiType(t types.Type) string {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || !isCenkalti(n.Obj().Pkg().Path()) {
		return ""
	}
	return n.Obj().Name()
}

// litKey returns the value a keyed struct literal gives field name (nil
// when it leaves it out); keyed is false for a positional literal.
func litKey(lit *ast.CompositeLit, name string) (v ast.Expr, keyed bool) {
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return nil, false
		}
		if k, _ := kv.Key.(*ast.Ident); k != nil && k.Name == name {
			return kv.Value, true
		}
	}
	return nil, true
}

// lastFieldSet reports whether body assigns v.field, and the value the
// last such assignment gives.
func (c *checker) lastFieldSet(v *types.Var, body *ast.BlockStmt, field string) (ast.Expr, bool) {
	var last ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			return true
		}
		for i, l := range as.Lhs {
			sel, ok := ast.Unparen(l).(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != field {
				continue
			}
			if id, ok := ast.Unparen(sel.X).(*ast.Ident); ok && c.info.Uses[id] == v {
				last = as.Rhs[i]
			}
		}
		return true
	})
	return last, last != nil
}
