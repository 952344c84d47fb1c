package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A status set is often tested through a small helper of the package:
// responseHasStatusCode(resp, retries...) or isOneOf(code, 429, 503), whose
// body ranges over its codes and answers true on a match with the status.
// Such a call is read as the membership test it is.

// memberCall recognises a call of such a helper. It returns the argument
// that carries the status (a response or a status code) and the statuses
// the call tests against; ok is false for any other call, or when a status
// of the set is out of sight.
func (c *checker) memberCall(call *ast.CallExpr, body *ast.BlockStmt) (status ast.Expr, set map[int64]bool, ok bool) {
	fn := c.callee(call)
	d := c.decls[fn]
	if d == nil || len(call.Args) == 0 {
		return nil, nil, false
	}
	sig := fn.Type().(*types.Signature)
	if sig.Results().Len() != 1 || !isBool(sig.Results().At(0).Type()) {
		return nil, nil, false
	}
	if sig.Recv() != nil && sig.Params().Len() == 1 && len(call.Args) == 1 && !sig.Variadic() {
		// t.retries(resp.StatusCode), ranging over the receiver's own
		// codes: the statuses every composite literal of the type gives
		// that field.
		codes := c.membershipRange(d.Body, sig.Params().At(0), func(x ast.Expr) bool { return c.receiverField(x, sig.Recv()) })
		if codes == nil {
			return nil, nil, false
		}
		set, ok = c.statusSetOf(codes, nil, 0)
		return call.Args[0], set, ok
	}
	if sig.Params().Len() != 2 || len(call.Args) < 2 {
		return nil, nil, false
	}
	// The status first and the codes second (isOneOf(code, 429, 503)), or
	// the other way round (contains(codes, code)).
	for si := range 2 {
		codesParam := sig.Params().At(1 - si)
		if si == 1 && (sig.Variadic() || len(call.Args) != 2) {
			continue
		}
		codes := c.membershipRange(d.Body, sig.Params().At(si), func(x ast.Expr) bool {
			return c.varOf(x) == codesParam || c.receiverField(x, codesParam)
		})
		if codes == nil {
			continue
		}
		if c.varOf(codes) != codesParam {
			// retryable(code, cfg) ranging over cfg.RetryOnStatus: the
			// statuses the package gives that field, by default.
			set, ok = c.statusSetOf(codes, nil, 0)
			return call.Args[si], set, ok
		}
		switch {
		case si == 1 || call.Ellipsis.IsValid() || !sig.Variadic():
			if len(call.Args) != 2 {
				return nil, nil, false
			}
			set, ok = c.statusSetOf(call.Args[1-si], body, 0)
		default:
			set = map[int64]bool{}
			for _, a := range call.Args[1:] {
				k, isConst := c.constIntOf(a)
				if !isConst {
					return nil, nil, false
				}
				set[k] = true
			}
			ok = true
		}
		return call.Args[si], set, ok
	}
	return nil, nil, false
}

// membershipRange returns what a helper's body ranges over when it is
// codes (by isCodes) and the body returns true when an element equals
// subject's status (subject.StatusCode, or subject itself when it is an
// integer); nil when it has no such loop.
func (c *checker) membershipRange(body *ast.BlockStmt, subject *types.Var, isCodes func(ast.Expr) bool) ast.Expr {
	var found ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		r, isRange := n.(*ast.RangeStmt)
		if found != nil || !isRange || !isCodes(r.X) {
			return found == nil
		}
		elem := c.varOf(r.Value)
		if elem == nil {
			return true
		}
		for _, s := range r.Body.List {
			ifs, isIf := s.(*ast.IfStmt)
			if isIf && ifs.Init == nil && c.matchesElem(ifs.Cond, elem, subject) && returnsTrue(ifs.Body) {
				found = r.X
			}
		}
		return found == nil
	})
	return found
}

// receiverField reports whether x is a field of recv (t.codes in a method
// of t, cfg.RetryOnStatus of a parameter cfg).
func (c *checker) receiverField(x ast.Expr, recv *types.Var) bool {
	sel, ok := ast.Unparen(x).(*ast.SelectorExpr)
	if !ok || c.varOf(sel.X) != recv {
		return false
	}
	v, isVar := c.info.Uses[sel.Sel].(*types.Var)
	return isVar && v.IsField()
}

// matchesElem reports whether cond is elem == the subject's status.
func (c *checker) matchesElem(cond ast.Expr, elem, subject *types.Var) bool {
	b, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	if !ok || b.Op != token.EQL {
		return false
	}
	x, y := b.X, b.Y
	if c.varOf(y) == elem {
		x, y = y, x
	}
	if c.varOf(x) != elem {
		return false
	}
	if c.varOf(y) == subject {
		return isInteger(subject.Type())
	}
	sel, isSel := ast.Unparen(y).(*ast.SelectorExpr)
	return isSel && c.varOf(sel.X) == subject && sel.Sel.Name == "StatusCode"
}

// varOf returns the variable an identifier names, or nil.
func (c *checker) varOf(e ast.Expr) *types.Var {
	id := identOf(e)
	if id == nil {
		return nil
	}
	v, _ := c.objOf(id).(*types.Var)
	return v
}

// returnsTrue reports whether a block is a lone return true.
func returnsTrue(b *ast.BlockStmt) bool {
	if len(b.List) != 1 {
		return false
	}
	r, ok := b.List[0].(*ast.ReturnStmt)
	if !ok || len(r.Results) != 1 {
		return false
	}
	id, ok := r.Results[0].(*ast.Ident)
	return ok && id.Name == "true"
}

// memberEval evaluates a membership helper's call on outcome o.
func (ev *evaluator) memberEval(call *ast.CallExpr, o outcome) (tri, bool) {
	c := ev.w.c
	st, set, ok := c.memberCall(call, ev.w.body)
	if !ok {
		return triU, false
	}
	if !o.hasStatus || (o.err && ev.k == remoteHTTP) {
		return triF, true
	}
	var v int64
	switch {
	case isNamed(c.info.TypeOf(st), "net/http", "Response") && ev.fromAttempt(st):
		v = int64(o.status)
	case c.hasStatus(st) || c.statusVar(st, ev.w.body):
		if v, ok = c.evalInt(st, o, ev.w.body, 0); !ok {
			return triU, true
		}
	default:
		return triU, false
	}
	return boolTri(set[v]), true
}
