package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// counterElems reports whether x is a local map or slice of integers
// whose elements body only counts: made empty (make, or a literal of
// constants) and written only by ++, --, or =, += and -= of a constant
// (tries := map[int]int{}; tries[resp.StatusCode]++). An element read
// from it is a counter, as pure as a loop's own.
func (c *checker) counterElems(x ast.Expr, body *ast.BlockStmt) bool {
	v := c.varOf(x)
	if v == nil || body == nil || isPkgVar(v) || c.params[v] {
		return false
	}
	k := countedKey{v, body}
	if r, seen := c.counted[k]; seen {
		return r
	}
	r := c.countsOnly(v, body)
	c.counted[k] = r
	return r
}

// countedKey is a variable and the body its writes are read in.
type countedKey struct {
	v    *types.Var
	body *ast.BlockStmt
}

// countsOnly is counterElems for the local variable v of body.
func (c *checker) countsOnly(v *types.Var, body *ast.BlockStmt) bool {
	var elem types.Type
	switch t := v.Type().Underlying().(type) {
	case *types.Map:
		elem = t.Elem()
	case *types.Slice:
		elem = t.Elem()
	default:
		return false
	}
	if !isIntegerNotDuration(elem) {
		return false
	}
	for _, a := range c.assignsOf(body)[v] {
		if !c.emptyCounters(a) {
			return false
		}
	}
	ok := true
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IncDecStmt:
			return ok
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				ix, isIndex := ast.Unparen(l).(*ast.IndexExpr)
				if !isIndex || c.varOf(ix.X) != v {
					continue
				}
				step := n.Tok == token.ASSIGN || n.Tok == token.ADD_ASSIGN || n.Tok == token.SUB_ASSIGN
				if !step || len(n.Lhs) != 1 || len(n.Rhs) != 1 || !c.isConst(n.Rhs[0]) {
					ok = false
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND && c.varOf(n.X) == v {
				ok = false // &tries: written out of sight
			}
		}
		return ok
	})
	return ok
}

// emptyCounters reports whether e makes a map or slice of counters:
// make(…), or a composite literal of constants.
func (c *checker) emptyCounters(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		b, ok := c.info.Uses[calleeIdent(e.Fun)].(*types.Builtin)
		return ok && b.Name() == "make"
	case *ast.CompositeLit:
		for _, el := range e.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			if !c.isConst(el) {
				return false
			}
		}
		return true
	}
	return false
}

// isConst reports whether e is a constant expression.
func (c *checker) isConst(e ast.Expr) bool {
	tv, ok := c.info.Types[e]
	return ok && tv.Value != nil
}

// countedElem reports whether e reads an element of such a map or slice
// (tries[resp.StatusCode]).
func (c *checker) countedElem(e ast.Expr, body *ast.BlockStmt) bool {
	ix, ok := ast.Unparen(e).(*ast.IndexExpr)
	return ok && c.counterElems(ix.X, body)
}
