package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A branch taken only when a configuration field is set (if b.jitter != 0
// { … }) is not taken by default when every value the package gives that
// field is zero: a constructor's literal, or a constructor's parameter
// that every caller in the package passes as zero (DefaultBacko() calls
// NewBacko(100*time.Millisecond, 2, 0, 10*time.Second)). What such a
// branch assigns does not make a duration jittered by default.

// offByDefault returns the bodies of the if statements in body that are
// taken only when a field that is zero by default is set.
func (c *checker) offByDefault(body *ast.BlockStmt) []ast.Node {
	if body == nil {
		return nil
	}
	if out, ok := c.off[body]; ok {
		return out
	}
	var out []ast.Node
	defer func() { c.off[body] = out }()
	var gates []*types.Var
	ast.Inspect(body, func(n ast.Node) bool {
		if s, ok := n.(*ast.IfStmt); ok {
			if v := c.setTest(s.Cond); v != nil {
				out = append(out, s.Body)
				gates = append(gates, v)
			}
		}
		return true
	})
	c.gates[body] = gates
	return out
}

// setTest returns the field f when e is x.f != 0 (or x.f > 0) for a field
// the package leaves zero by default, else nil.
func (c *checker) setTest(e ast.Expr) *types.Var {
	b, ok := ast.Unparen(e).(*ast.BinaryExpr)
	if !ok || (b.Op != token.NEQ && b.Op != token.GTR) {
		return nil
	}
	sel, ok := ast.Unparen(b.X).(*ast.SelectorExpr)
	if !ok || !c.isZero(b.Y) {
		return nil
	}
	v, ok := c.info.Uses[sel.Sel].(*types.Var)
	if !ok || !v.IsField() || !c.zeroByDefault(v) {
		return nil
	}
	return v
}

func (c *checker) isZero(e ast.Expr) bool {
	tv, ok := c.info.Types[e]
	return ok && tv.Value != nil && tv.Value.ExactString() == "0"
}

// zeroByDefault reports whether every value the package gives field v is
// zero, and it gives it at least one; or v is an exported field (a
// setting: a Jitter, a WriteBackoffMin) of a type of this package that
// the package never sets at all, so that only its user can.
func (c *checker) zeroByDefault(v *types.Var) bool {
	vals := c.fieldValues[v]
	if len(vals) == 0 {
		return v.Exported() && v.Pkg() == c.pass.Pkg && !c.fieldMutated[v]
	}
	for _, fv := range vals {
		if c.isZero(fv.expr) || c.selfCopy(v, fv.expr) || c.userParam(fv.expr) {
			continue
		}
		if !c.zeroFromCallers(fv.expr) {
			return false
		}
	}
	return true
}

// zeroFromCallers reports whether e is a parameter of a function of this
// package that every call in the package (its tests excluded), and at
// least one, passes a zero.
func (c *checker) zeroFromCallers(e ast.Expr) bool {
	_, idx, sites := c.paramSites(e)
	if len(sites) == 0 {
		return false
	}
	for _, s := range sites {
		if idx >= len(s.call.Args) || !c.isZero(s.call.Args[idx]) {
			return false
		}
	}
	return true
}

// paramOwner returns the function of this package whose parameter p is.
func (c *checker) paramOwner(p *types.Var) *types.Func {
	for fn, d := range c.decls {
		if d.Type.Params == nil || p.Pos() < d.Type.Params.Pos() || p.Pos() > d.Type.Params.End() {
			continue
		}
		return fn
	}
	return nil
}

// paramFromCallers says what the callers in this package pass for the
// parameter e names: absent (pNone) if none calls its function.
func (c *checker) paramFromCallers(e ast.Expr) purity {
	return c.paramFromCallersDepth(e, 0)
}

// paramFromCallersDepth follows a parameter passed on as another
// function's parameter (NewListener(min) calls NewDialListener(d, min)) a
// few calls up; an exported function's time.Duration parameter nothing in
// the package passes is the user's setting, pure whatever it is.
func (c *checker) paramFromCallersDepth(e ast.Expr, depth int) purity {
	fn, idx, sites := c.paramSites(e)
	if fn == nil || len(sites) == 0 {
		return purity{kind: pNone}
	}
	p := purity{kind: pNone}
	for _, s := range sites {
		if idx >= len(s.call.Args) || (s.call.Ellipsis.IsValid() && idx == len(s.call.Args)-1) {
			return purity{}
		}
		a := s.call.Args[idx]
		if c.isParam(a) && depth < 3 {
			q := c.paramFromCallersDepth(a, depth+1)
			if q.kind == pNone && c.userDuration(a) {
				q = purity{kind: pPure, caller: true}
			}
			p = p.and(q)
			continue
		}
		p = p.and(c.purity(a, s.body, s.fn, 1))
	}
	return p
}

// paramSites returns the function whose parameter e names, its index,
// and the calls of the function in this package.
func (c *checker) paramSites(e ast.Expr) (*types.Func, int, []callSite) {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil, 0, nil
	}
	p, ok := c.info.Uses[id].(*types.Var)
	if !ok || !c.params[p] {
		return nil, 0, nil
	}
	return c.paramSitesOf(p)
}

// paramSitesOf is paramSites for parameter p.
func (c *checker) paramSitesOf(p *types.Var) (*types.Func, int, []callSite) {
	fn := c.paramOwner(p)
	if fn == nil {
		return nil, 0, nil
	}
	sig := fn.Type().(*types.Signature)
	if sig.Variadic() && sig.Params().At(sig.Params().Len()-1) == p {
		// the options' slice: its elements are not one argument
		return nil, 0, nil
	}
	if c.sites == nil {
		c.findSites()
	}
	for i := range sig.Params().Len() {
		if sig.Params().At(i) == p {
			return fn, i, c.sites[fn]
		}
	}
	return nil, 0, nil
}
