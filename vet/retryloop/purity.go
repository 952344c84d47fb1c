package retryloop

import (
	"go/ast"
	"go/types"
)

// A purity says what a wait's duration is made of: only constants and
// counters (pPure: constant or purely exponential, the same for every
// client), something random (pRand: jittered), something the analyzer
// cannot see through (pUnknown: a configuration field, a backoff library's
// NextBackOff), or a duration parameter of the function (pParam: the
// caller decides).
type purity struct {
	kind  int
	param int
}

const (
	pUnknown = iota
	pPure
	pRand
	pParam
)

func (p purity) and(q purity) purity {
	switch {
	case p.kind == pRand || q.kind == pRand:
		return purity{kind: pRand}
	case p.kind == pUnknown || q.kind == pUnknown:
		return purity{kind: pUnknown}
	case p.kind == pParam && q.kind == pParam:
		if p.param == q.param {
			return p
		}
		return purity{kind: pUnknown}
	case p.kind == pParam:
		return p
	case q.kind == pParam:
		return q
	}
	return purity{kind: pPure}
}

var randPkgs = map[string]bool{"math/rand": true, "math/rand/v2": true, "crypto/rand": true}

// unknownExpr stands for a value assigned from a tuple or otherwise out of
// sight.
var unknownExpr ast.Expr = &ast.BadExpr{}

// assignsOf maps each variable assigned in body (function literals inside
// it included) to the expressions assigned to it.
func (c *checker) assignsOf(body *ast.BlockStmt) map[types.Object][]ast.Expr {
	if body == nil {
		return nil
	}
	if m, ok := c.assigns[body]; ok {
		return m
	}
	m := map[types.Object][]ast.Expr{}
	obj := func(e ast.Expr) types.Object {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return nil
		}
		if o := c.info.Defs[id]; o != nil {
			return o
		}
		return c.info.Uses[id]
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				o := obj(l)
				if o == nil {
					continue
				}
				if len(n.Lhs) == len(n.Rhs) {
					m[o] = append(m[o], n.Rhs[i])
				} else {
					m[o] = append(m[o], unknownExpr)
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				o := obj(name)
				switch {
				case o == nil || len(n.Values) == 0:
				case len(n.Values) == len(n.Names):
					m[o] = append(m[o], n.Values[i])
				default:
					m[o] = append(m[o], unknownExpr)
				}
			}
		case *ast.RangeStmt:
			if n.Value != nil {
				if o := obj(n.Value); o != nil {
					m[o] = append(m[o], n.X)
				}
			}
		}
		return true
	})
	c.assigns[body] = m
	return m
}

func isIntegerNotDuration(t types.Type) bool {
	if isNamed(t, "time", "Duration") {
		return false
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

// purity says what e is made of. body holds the assignments of the
// function e is in, fn is that function (for its parameters).
func (c *checker) purity(e ast.Expr, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	if depth > 12 || e == nil || e == unknownExpr {
		return purity{}
	}
	if tv, ok := c.info.Types[e]; ok && tv.Value != nil {
		return purity{kind: pPure}
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		return purity{kind: pPure}
	case *ast.ParenExpr:
		return c.purity(e.X, body, fn, depth+1)
	case *ast.UnaryExpr:
		return c.purity(e.X, body, fn, depth+1)
	case *ast.BinaryExpr:
		return c.purity(e.X, body, fn, depth+1).and(c.purity(e.Y, body, fn, depth+1))
	case *ast.IndexExpr:
		return c.purity(e.X, body, fn, depth+1)
	case *ast.CompositeLit:
		p := purity{kind: pPure}
		for _, el := range e.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			p = p.and(c.purity(el, body, fn, depth+1))
		}
		return p
	case *ast.Ident:
		return c.identPurity(e, body, fn, depth)
	case *ast.SelectorExpr:
		if id, ok := c.info.Uses[e.Sel].(*types.Var); ok && !id.IsField() {
			return c.varPurity(id, nil, nil, depth)
		}
		return purity{}
	case *ast.CallExpr:
		return c.callPurity(e, body, fn, depth)
	}
	return purity{}
}

func (c *checker) identPurity(id *ast.Ident, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	switch o := c.info.Uses[id].(type) {
	case *types.Const:
		return purity{kind: pPure}
	case *types.Var:
		return c.varPurity(o, body, fn, depth)
	}
	return purity{}
}

func (c *checker) varPurity(v *types.Var, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	if v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
		if init, ok := c.pkgVars[v]; ok {
			return c.purity(init, nil, nil, depth+1)
		}
		return purity{}
	}
	if fn != nil {
		if sig, ok := fn.Type().(*types.Signature); ok {
			for i := range sig.Params().Len() {
				if sig.Params().At(i) == v {
					if isIntegerNotDuration(v.Type()) {
						return purity{kind: pPure}
					}
					return purity{kind: pParam, param: i}
				}
			}
		}
	}
	exprs := c.assignsOf(body)[v]
	if len(exprs) == 0 {
		if isIntegerNotDuration(v.Type()) {
			return purity{kind: pPure}
		}
		return purity{}
	}
	p := purity{kind: pPure}
	for _, x := range exprs {
		// x = x*2 refers to x itself: the other terms decide.
		if refersTo(c.info, x, v) {
			p = p.and(c.purityExcept(x, v, body, fn, depth+1))
			continue
		}
		p = p.and(c.purity(x, body, fn, depth+1))
	}
	return p
}

func refersTo(info *types.Info, e ast.Expr, v *types.Var) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == v {
			found = true
		}
		return !found
	})
	return found
}

// purityExcept is purity with v itself counted as pure (a self-reference in
// x = x * 2).
func (c *checker) purityExcept(e ast.Expr, v *types.Var, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok && c.info.Uses[id] == v {
		return purity{kind: pPure}
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.BinaryExpr:
		return c.purityExcept(e.X, v, body, fn, depth+1).and(c.purityExcept(e.Y, v, body, fn, depth+1))
	case *ast.UnaryExpr:
		return c.purityExcept(e.X, v, body, fn, depth+1)
	case *ast.CallExpr:
		if tv, ok := c.info.Types[e.Fun]; ok && tv.IsType() && len(e.Args) == 1 {
			return c.purityExcept(e.Args[0], v, body, fn, depth+1)
		}
		if b, ok := c.info.Uses[calleeIdent(e.Fun)].(*types.Builtin); ok && (b.Name() == "min" || b.Name() == "max") {
			p := purity{kind: pPure}
			for _, a := range e.Args {
				p = p.and(c.purityExcept(a, v, body, fn, depth+1))
			}
			return p
		}
	}
	return c.purity(e, body, fn, depth+1)
}

func calleeIdent(e ast.Expr) *ast.Ident {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return e
	case *ast.SelectorExpr:
		return e.Sel
	}
	return nil
}

func (c *checker) callPurity(call *ast.CallExpr, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	if tv, ok := c.info.Types[call.Fun]; ok && tv.IsType() && len(call.Args) == 1 {
		return c.purity(call.Args[0], body, fn, depth+1)
	}
	if b, ok := c.info.Uses[calleeIdent(call.Fun)].(*types.Builtin); ok {
		if b.Name() == "min" || b.Name() == "max" {
			p := purity{kind: pPure}
			for _, a := range call.Args {
				p = p.and(c.purity(a, body, fn, depth+1))
			}
			return p
		}
		return purity{}
	}
	callee := c.callee(call)
	if callee == nil {
		return purity{}
	}
	path := funcPath(callee)
	if randPkgs[path] {
		return purity{kind: pRand}
	}
	if path == "math" || (path == "time" && recvNamed(callee) != nil && recvNamed(callee).Obj().Name() == "Duration") {
		p := purity{kind: pPure}
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && path == "time" {
			p = c.purity(sel.X, body, fn, depth+1)
		}
		for _, a := range call.Args {
			p = p.and(c.purity(a, body, fn, depth+1))
		}
		return p
	}
	// A function of this package: what its results are made of.
	d, ok := c.decls[callee]
	if !ok {
		return purity{}
	}
	r, done := c.purities[callee]
	if !done {
		c.purities[callee] = purity{} // a recursive function: unknown
		r = purity{kind: pPure}
		n := 0
		ast.Inspect(d.Body, func(n2 ast.Node) bool {
			if _, ok := n2.(*ast.FuncLit); ok {
				return false
			}
			if ret, ok := n2.(*ast.ReturnStmt); ok && len(ret.Results) > 0 {
				n++
				r = r.and(c.purity(ret.Results[0], d.Body, callee, depth+1))
			}
			return true
		})
		if n == 0 {
			r = purity{}
		}
		c.purities[callee] = r
	}
	if r.kind == pParam {
		if r.param < len(call.Args) && !call.Ellipsis.IsValid() {
			return c.purity(call.Args[r.param], body, fn, depth+1)
		}
		return purity{}
	}
	return r
}
