package retryloop

import (
	"go/ast"
	"go/types"
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
