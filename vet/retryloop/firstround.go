package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// firstRound reads a test in a for statement's condition that holds on
// the first round only: the loop's counter compared with the constant
// its Init gives it, when its Post only counts up and the body never sets
// it (for i := 0; (0 == i || err != nil) && i <= n; i++). The condition
// is read at each go-round, after Post has moved the counter on, so there
// the test is false (==) or true (!=): a success leaves the loop. ok is
// false for any other expression.
func (w *loopWalker) firstRound(e *ast.BinaryExpr) (r tri, ok bool) {
	fs, isFor := w.loop.(*ast.ForStmt)
	if !isFor || fs.Cond == nil || !within([]ast.Node{fs.Cond}, e) || e.Op != token.EQL && e.Op != token.NEQ {
		return triU, false
	}
	v, start, ok := w.c.countedFrom(fs)
	if !ok {
		return triU, false
	}
	x, y := ast.Unparen(e.X), ast.Unparen(e.Y)
	if id, isID := y.(*ast.Ident); isID && w.c.objOf(id) == v {
		x, y = y, x
	}
	id, isID := x.(*ast.Ident)
	if !isID || w.c.objOf(id) != v {
		return triU, false
	}
	if k, isConst := w.c.constIntOf(y); !isConst || k != start {
		return triU, false
	}
	return boolTri(e.Op == token.NEQ), true
}

// countedFrom returns the counter of a for statement whose Init sets it to
// an integer constant and whose Post only adds a positive constant to it,
// the body never setting it nor taking its address.
func (c *checker) countedFrom(fs *ast.ForStmt) (*types.Var, int64, bool) {
	init, ok := fs.Init.(*ast.AssignStmt)
	if !ok || len(init.Lhs) != 1 || len(init.Rhs) != 1 {
		return nil, 0, false
	}
	id, ok := init.Lhs[0].(*ast.Ident)
	if !ok {
		return nil, 0, false
	}
	v, ok := c.objOf(id).(*types.Var)
	if !ok {
		return nil, 0, false
	}
	start, ok := c.constIntOf(init.Rhs[0])
	if !ok {
		return nil, 0, false
	}
	switch p := fs.Post.(type) {
	case *ast.IncDecStmt:
		if p.Tok != token.INC || c.varOf(p.X) != v {
			return nil, 0, false
		}
	case *ast.AssignStmt:
		if p.Tok != token.ADD_ASSIGN || len(p.Lhs) != 1 || c.varOf(p.Lhs[0]) != v {
			return nil, 0, false
		}
		if k, isConst := c.constIntOf(p.Rhs[0]); !isConst || k <= 0 {
			return nil, 0, false
		}
	default:
		return nil, 0, false
	}
	if c.setsVar(fs.Body, v) {
		return nil, 0, false
	}
	return v, start, true
}

// setsVar reports whether n assigns v, counts it up or down, or takes its
// address.
func (c *checker) setsVar(n ast.Node, v *types.Var) bool {
	set := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				set = set || c.varOf(l) == v
			}
		case *ast.IncDecStmt:
			set = set || c.varOf(n.X) == v
		case *ast.UnaryExpr:
			set = set || n.Op == token.AND && c.varOf(n.X) == v
		}
		return !set
	})
	return set
}
