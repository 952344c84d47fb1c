package retryloop

import (
	"go/ast"
	"go/types"
)

// ctxRecv reports whether fun, a call's function, is a method of a
// context reached along its chain of receivers (ctx.Err, r.Context().Err),
// not of a value a call handed a context made (rdb.Get(ctx, k).Result).
func (c *checker) ctxRecv(fun ast.Expr) bool {
	for {
		if isContext(c.info.TypeOf(fun)) {
			return true
		}
		switch x := ast.Unparen(fun).(type) {
		case *ast.SelectorExpr:
			fun = x.X
		case *ast.CallExpr:
			fun = x.Fun
		case *ast.IndexExpr:
			fun = x.X
		default:
			return c.mentionsContext(x)
		}
	}
}

// mentionsContext reports whether e involves a context.Context value.
func (c *checker) mentionsContext(e ast.Node) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if x, ok := n.(ast.Expr); ok && isContext(c.info.TypeOf(x)) {
			found = true
		}
		return !found
	})
	return found
}

// bgCtxArg reports whether call hands callee context.Background() or
// context.TODO() made in place as one of its context parameters: a
// context nothing can cancel.
func (c *checker) bgCtxArg(call *ast.CallExpr, callee *types.Func) bool {
	params := callee.Type().(*types.Signature).Params()
	for i, a := range call.Args {
		if i >= params.Len() || !isContext(params.At(i).Type()) {
			continue
		}
		if c.bgCtx(a, nil) != "" {
			return true
		}
	}
	return false
}
