package retryloop

import (
	"go/ast"
	"go/types"
)

// okPairPart reports whether e is a variable that holds the first result
// of a call, made once in the body's own list (stack's outermost node), to
// a function of this package that answers false with every error it
// returns and true only with none (done, last = c.syncOnce(ctx)): false
// there says the call failed.
func (c *checker) okPairPart(e ast.Expr, stack []ast.Node) bool {
	v := c.varOf(e)
	body, ok := stack[0].(*ast.BlockStmt)
	if v == nil || !ok {
		return false
	}
	var from *ast.AssignStmt
	n := 0
	ast.Inspect(body, func(x ast.Node) bool {
		if as, ok := x.(*ast.AssignStmt); ok {
			for _, l := range as.Lhs {
				if c.varOf(l) == v {
					from, n = as, n+1
				}
			}
		}
		return true
	})
	if n != 1 || len(from.Lhs) != 2 || len(from.Rhs) != 1 || c.varOf(from.Lhs[0]) != v {
		return false
	}
	top := false
	for _, s := range body.List {
		top = top || s == ast.Stmt(from)
	}
	call, ok := ast.Unparen(from.Rhs[0]).(*ast.CallExpr)
	return top && ok && c.okPair(c.callee(call))
}

// okPair reports whether fn, a function of this package whose results are
// a bool and an error, returns false with an error and true with nil on
// every return, at least one of them a failure.
func (c *checker) okPair(fn *types.Func) bool {
	d := c.decls[fn]
	if d == nil || d.Body == nil {
		return false
	}
	res := fn.Type().(*types.Signature).Results()
	if res.Len() != 2 || !isBool(res.At(0).Type()) || !isError(res.At(1).Type()) {
		return false
	}
	all, failures := true, 0
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(n.Results) != 2 {
				all = false
				break
			}
			v, known := c.constBool(n.Results[0])
			switch {
			case !known:
				all = false
			case !v && !isNil(c.info, n.Results[1]):
				failures++
			case !v || !isNil(c.info, n.Results[1]):
				all = false
			}
		}
		return all
	})
	return all && failures > 0
}
